//go:build !unix

package loadgen

func setRcvBuf(uintptr, int) {}
