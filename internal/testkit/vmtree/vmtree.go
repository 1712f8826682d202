// Package vmtree plays the VM against a tree asb reads (workspace/, its
// .git, a session's checkout) in tests: a chain of folders deeper than a
// path can name, and a writer that keeps changing the tree while asb
// walks it. It imports nothing of asb's, so the tests of any package
// (outer's and runner's among them) can use it; no binary links it.
package vmtree

import (
	"os"
	"sync"
	"testing"
)

// Nest makes a chain of depth folders named a under dir through openat,
// one mkdir at a time, as the VM can: a path that long is over PATH_MAX.
func Nest(t testing.TB, dir string, depth int) {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for range depth {
		if err := r.Mkdir("a", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot("a")
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r = next
	}
	r.Close()
}

// Churn runs change(i), for i = 0, 1, 2, …, over and over in a goroutine of
// its own, as the VM rewrites files while asb reads them, until stop is
// called; stop returns once the last change has ended.
func Churn(change func(i int)) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			default:
			}
			change(i)
		}
	})
	return func() { close(quit); wg.Wait() }
}
