package vod

import "testing"

const kbps245 = 245 * KB

func TestLedgerStreams(t *testing.T) {
	flash := Ledger{Capacity: 155 * MB}
	if n := flash.MaxStreams(kbps245); n != 647 {
		t.Fatalf("155 MB/s holds %d streams of 245 KB/s, paper says 647", n)
	}
	for range 647 {
		if !flash.Reserve(kbps245) {
			t.Fatal("refused below capacity")
		}
	}
	if flash.Reserve(kbps245) || flash.Fits(kbps245) {
		t.Fatal("admitted stream 648")
	}
	flash.Release(kbps245)
	if !flash.Fits(kbps245) || flash.Free() < kbps245 {
		t.Fatal("released bandwidth not free")
	}
}

func TestLedgerReleaseTooMuchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	l := Ledger{Capacity: 10}
	l.Release(1)
}

// TestAdmitAlgorithm2 walks Algorithm 2's branches: a hit goes to flash
// while flash has room, then falls back to disk; a miss goes to disk; with
// both full the request is rejected.
func TestAdmitAlgorithm2(t *testing.T) {
	a := Admission{Flash: Ledger{Capacity: 2 * kbps245}, Disk: Ledger{Capacity: 1 * kbps245}}
	steps := []struct {
		hit  bool
		want Source
	}{
		{true, FromFlash}, {true, FromFlash}, {true, FromDisk}, {true, Rejected}, {false, Rejected},
	}
	for i, s := range steps {
		if got := a.Admit(s.hit, kbps245); got != s.want {
			t.Fatalf("step %d: hit=%v admitted on %v, want %v", i, s.hit, got, s.want)
		}
	}
	a.Release(FromDisk, kbps245)
	if got := a.Admit(false, kbps245); got != FromDisk {
		t.Fatalf("miss after a disk release: %v", got)
	}
	if a.Admitted[FromFlash] != 2 || a.Admitted[FromDisk] != 2 || a.Refused != 2 {
		t.Fatalf("counts %v refused %d", a.Admitted, a.Refused)
	}
}

// TestAdmitAlgorithm1 checks that interval caching admits on disk
// bandwidth only.
func TestAdmitAlgorithm1(t *testing.T) {
	a := Admission{Disk: Ledger{Capacity: 100 * MB}}
	n := 0
	for a.AdmitDisk(kbps245) == FromDisk {
		n++
	}
	if n != 417 {
		t.Fatalf("100 MB/s admitted %d streams of 245 KB/s, want 417", n)
	}
}

func TestSpare(t *testing.T) {
	a := Admission{Flash: Ledger{Capacity: 100}, Disk: Ledger{Capacity: 50}}
	a.Admit(false, 20)
	if s := a.Spare(1000); s != 30 {
		t.Fatalf("spare %d, want the disk's 30", s)
	}
	if s := a.Spare(10); s != 10 {
		t.Fatalf("spare %d, want the limit 10", s)
	}
}
