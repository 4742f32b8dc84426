//go:build unix

package loadgen

import "syscall"

// setRcvBuf bounds a socket's receive buffer to n bytes.
func setRcvBuf(fd uintptr, n int) {
	syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n) //nolint:errcheck // a hint
}
