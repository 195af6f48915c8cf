package cli

import "golang.org/x/sys/unix"

// ioctlReadTermios reads a terminal's settings (isTerminal); darwin names
// Linux's TCGETS TIOCGETA.
const ioctlReadTermios = unix.TIOCGETA
