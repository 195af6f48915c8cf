"""The vendored tag (Karapace's setuptools_scm writes this file in a packaged build)."""
__version__ = "3.15.0"
