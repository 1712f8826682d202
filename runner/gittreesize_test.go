package runner

import (
	"math"
	"testing"
)

// ls-tree -r -l -z's records, written in pieces that cut records (and a
// path's bytes) anywhere, add up the same; a submodule is not a file.
func TestTreeSizerAddsRecordsInAnyPieces(t *testing.T) {
	out := "100644 blob 8ab686eafeb1f44702738c8b0f24f2567c36da6d      12\tREADME\x00" +
		"160000 commit 8ab686eafeb1f44702738c8b0f24f2567c36da6d       -\tsub\x00" +
		"100755 blob 8ab686eafeb1f44702738c8b0f24f2567c36da6d 8388608\tbin/zeros\tx\x00" +
		"120000 blob 8ab686eafeb1f44702738c8b0f24f2567c36da6d       6\tlink\x00"
	for step := 1; step <= len(out); step += 7 {
		var s treeSizer
		w := treeRecords{sizes: true, each: s.add}
		for i := 0; i < len(out); i += step {
			if _, err := w.Write([]byte(out[i:min(i+step, len(out))])); err != nil {
				t.Fatal(err)
			}
		}
		want := TreeSize{Bytes: 12 + 8388608 + 6, Files: 3, Largest: "bin/zeros\tx", MaxSize: 8388608}
		if w.err != nil || s.size != want {
			t.Fatalf("pieces of %d: %+v (%v), want %+v", step, s.size, w.err, want)
		}
	}
}

// A record that is not ls-tree's is an error, not a size of nothing; a
// sum past int64 stays at its largest.
func TestTreeSizerRefusesWhatItCannotRead(t *testing.T) {
	for _, rec := range []string{"100644 blob abc\tREADME\x00", "100644 blob abc x\tREADME\x00", "100644 blob abc -5\tREADME\x00", "no tab\x00"} {
		var s treeSizer
		w := treeRecords{sizes: true, each: s.add}
		_, _ = w.Write([]byte(rec))
		if w.err == nil {
			t.Errorf("%q read as %+v", rec, s.size)
		}
	}
	var s treeSizer
	w := treeRecords{sizes: true, each: s.add}
	big := "100644 blob abc 9223372036854775000\tA\x00"
	_, _ = w.Write([]byte(big + big))
	if w.err != nil || s.size.Bytes != math.MaxInt64 || s.size.Files != 2 {
		t.Errorf("two huge files: %+v (%v), want the sum at MaxInt64", s.size, w.err)
	}
}
