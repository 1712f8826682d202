package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// BuilderImage is one image in the builder's store (docker or podman).
type BuilderImage struct {
	Owner
	Ref   string `json:"reference"`
	ID    string `json:"id"`
	Bytes int64  `json:"disk_bytes"` // 0 for a second name of an image counted already
}

// LoadBuilder adds the builder's named images (each with the folder its
// tag names, agents-sandbox/runner-<slug>:…) and the bytes of its build
// cache (podman: images without a name, the build's layers; docker: its
// build cache, as docker system df reports it).
func (f *Fleet) LoadBuilder(ctx context.Context, b Builder) error {
	argv := strings.Fields(b.Command)
	if len(argv) == 0 {
		return fmt.Errorf("no builder")
	}
	f.Builder = b.Command
	var err error
	if filepath.Base(argv[0]) == "podman" {
		f.BuilderImages, f.BuilderCache, err = podmanImages(ctx, argv)
	} else {
		f.BuilderImages, f.BuilderCache, err = dockerImages(ctx, argv)
	}
	if err != nil {
		return err
	}
	owners := f.slugOwners()
	for i, img := range f.BuilderImages {
		if o, ok := owners[slugOf(img.Ref)]; ok {
			f.BuilderImages[i].Owner = o
		}
	}
	return nil
}

// podmanImages reads podman images -a --format json (sizes in bytes, the
// build's intermediate images included). podman 4.3 lists an image with
// two names twice, and its system df counts it twice; asb counts each
// image once (checked against the real podman).
func podmanImages(ctx context.Context, argv []string) ([]BuilderImage, int64, error) {
	out, err := Output(ctx, "", argv[0], append(argv[1:], "images", "-a", "--format", "json")...)
	if err != nil {
		return nil, 0, err
	}
	var imgs []struct {
		ID    string   `json:"Id"`
		Names []string `json:"Names"`
		Size  int64    `json:"Size"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &imgs); err != nil {
		return nil, 0, fmt.Errorf("podman images -a --format json: %w", err)
	}
	var named []BuilderImage
	var cache int64
	counted := map[string]bool{}
	seen := map[[2]string]bool{}
	for _, img := range imgs {
		if !counted[img.ID] && len(img.Names) == 0 {
			cache += img.Size
		}
		for _, n := range img.Names {
			if seen[[2]string{img.ID, n}] {
				continue
			}
			seen[[2]string{img.ID, n}] = true
			bi := BuilderImage{Ref: n, ID: img.ID}
			if !counted[img.ID] {
				bi.Bytes = img.Size
			}
			counted[img.ID] = true
			named = append(named, bi)
		}
		counted[img.ID] = true
	}
	return named, cache, nil
}

// dockerImages reads docker image ls (names), docker image inspect (the
// bytes) and docker system df (the build cache, which docker reports only
// in its own units).
func dockerImages(ctx context.Context, argv []string) ([]BuilderImage, int64, error) {
	docker := func(args ...string) ([]byte, error) { return Output(ctx, "", argv[0], append(argv[1:], args...)...) }
	out, err := docker("image", "ls", "--no-trunc", "--format", "{{.ID}} {{.Repository}}:{{.Tag}}")
	if err != nil {
		return nil, 0, err
	}
	var named []BuilderImage
	counted := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		id, ref, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok || strings.Contains(ref, "<none>") {
			continue
		}
		bi := BuilderImage{Ref: ref, ID: id}
		if !counted[id] {
			size, err := docker("image", "inspect", "--format", "{{.Size}}", id)
			if err != nil {
				return nil, 0, err
			}
			if bi.Bytes, err = strconv.ParseInt(strings.TrimSpace(string(size)), 10, 64); err != nil {
				return nil, 0, fmt.Errorf("docker image inspect %s: size %q", id, size)
			}
			counted[id] = true
		}
		named = append(named, bi)
	}
	out, err = docker("system", "df", "--format", "{{.Type}}\t{{.Size}}")
	if err != nil {
		return nil, 0, err
	}
	var cache int64
	for line := range strings.SplitSeq(string(out), "\n") {
		if size, ok := strings.CutPrefix(line, "Build Cache\t"); ok {
			if cache, err = dockerSize(strings.TrimSpace(size)); err != nil {
				return nil, 0, fmt.Errorf("docker system df: build cache %q: %w", size, err)
			}
		}
	}
	return named, cache, nil
}

// sizeUnits are the units of a size docker prints: go-units' decimal ones
// (HumanSize: 0B, 512kB, 1.23GB), and binary ones (1.5GiB) too.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "ti": 1 << 40, "tib": 1 << 40,
	"p": 1e15, "pb": 1e15, "pi": 1 << 50, "pib": 1 << 50,
}

// dockerSize reads a size docker prints as bytes. (A few lines here, not
// go-humanize, whose package initialisation every asb command paid.)
func dockerSize(s string) (int64, error) {
	end := strings.LastIndexAny(s, "0123456789.") + 1
	num, unit := s[:end], strings.ToLower(strings.TrimSpace(s[end:]))
	f, err := strconv.ParseFloat(num, 64)
	mult, ok := sizeUnits[unit]
	switch {
	case err != nil || num == "" || strings.ContainsAny(num, "eE+-"):
		return 0, fmt.Errorf("not a size: %q", s)
	case !ok:
		return 0, fmt.Errorf("unknown unit %q in %q", unit, s)
	case f*mult >= 1<<63:
		return 0, fmt.Errorf("too large: %q", s)
	}
	return int64(f * mult), nil
}
