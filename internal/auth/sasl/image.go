package sasl

import "github.com/sluice-io/sluice/internal/metadata"

// ImageCredentials is the CredentialStore of the metadata image: it returns
// the currently published image (UserScramCredentialRecord's credentials,
// by user and mechanism), so each lookup sees the latest
// AlterUserScramCredentials.
type ImageCredentials func() *metadata.Image

// ScramCredential looks user's credential for m up in the current image.
func (f ImageCredentials) ScramCredential(user string, m Mechanism) (Credential, bool) {
	mech, ok := metadata.ScramMechanismByName(string(m))
	im := f()
	if !ok || im == nil {
		return Credential{}, false
	}
	c, ok := im.ScramCredential(user, mech)
	if !ok {
		return Credential{}, false
	}
	return Credential{Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: int(c.Iterations)}, true
}
