package fakes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ---- docker / podman ----

type builtImage struct {
	Tag string `json:"tag"`
	ID  string `json:"id"`
}

func (e *env) builder(tool string, args []string) error {
	// podman's global flags come before the subcommand.
	for len(args) > 1 && strings.HasPrefix(args[0], "--") {
		if strings.Contains(args[0], "=") {
			args = args[1:]
		} else {
			args = args[2:]
		}
	}
	if len(args) == 0 {
		return exitError{125, tool + ": no command"}
	}
	kind := tool + "-images"
	switch args[0] {
	case "build":
		fl, pos, _ := flags(args[1:], "--tag", "-t", "--file", "-f", "--isolation", "--build-arg")
		tags := append(fl["--tag"], fl["-t"]...)
		if len(pos) != 1 || len(tags) == 0 {
			return exitError{125, tool + " build: want --tag T CONTEXT"}
		}
		df, err := os.ReadFile(filepath.Join(pos[0], "Dockerfile"))
		if err != nil {
			return fail("%s build: no Dockerfile in %s", tool, pos[0])
		}
		if err := e.needBase(tool, df, fl["--build-arg"]); err != nil {
			return err
		}
		sum := sha256.Sum256(df)
		img := builtImage{Tag: tags[0], ID: hex.EncodeToString(sum[:8])}
		fmt.Fprintf(e.stdout, "Successfully built %s\nSuccessfully tagged %s\n", img.ID, img.Tag)
		return e.put(kind, tags[0], img)
	case "image":
		if len(args) >= 3 && args[1] == "inspect" {
			var img builtImage
			ref := args[len(args)-1] // after --format F, if any
			if err := e.get(kind, ref, &img); err != nil {
				return fail("Error: No such image: %s", ref)
			}
			if slices.Contains(args, "--format") {
				return nil // asb asks for a label the stand-in's images do not have
			}
			return json.NewEncoder(e.stdout).Encode([]builtImage{img})
		}
	case "save":
		_, pos, _ := flags(args[1:], "-o", "--output")
		if len(pos) != 1 {
			return exitError{125, tool + " save: want one image"}
		}
		var img builtImage
		if err := e.get(kind, pos[0], &img); err != nil {
			return fail("Error: No such image: %s", pos[0])
		}
		_, err := fmt.Fprintf(e.stdout, "FAKE-IMAGE %s %s\n", img.Tag, img.ID)
		return err
	case "import":
		// asb image base: mmdebstrap's tar on stdin, the name last.
		data, err := io.ReadAll(e.stdin)
		if err != nil || len(data) == 0 {
			return fail("Error: no image on stdin")
		}
		sum := sha256.Sum256(data)
		return e.put(kind, args[len(args)-1], builtImage{Tag: args[len(args)-1], ID: hex.EncodeToString(sum[:8])})
	case "images":
		return e.builderImages(tool, kind)
	case "version", "info":
		_, err := fmt.Fprintf(e.stdout, "fake %s\n", tool)
		return err
	}
	return exitError{125, fmt.Sprintf("%s: unknown command %q", tool, args[0])}
}

// BuilderImageBytes is what each stand-in builder image weighs.
const BuilderImageBytes = 10_000

// builderImages is `podman images --format json`: podman's shape, a name
// without a registry under localhost/.
func (e *env) builderImages(tool, kind string) error {
	tags, err := e.names(kind)
	if err != nil {
		return err
	}
	slices.Sort(tags)
	type row struct {
		ID    string   `json:"Id"`
		Names []string `json:"Names"`
		Size  int64    `json:"Size"`
	}
	rows := []row{}
	for _, t := range tags {
		var img builtImage
		if err := e.get(kind, t, &img); err != nil {
			return err
		}
		name := img.Tag
		if first, _, _ := strings.Cut(name, "/"); !strings.ContainsAny(first, ".:") && first != "localhost" {
			name = "localhost/" + name
		}
		rows = append(rows, row{ID: img.ID, Names: []string{name}, Size: BuilderImageBytes})
	}
	if tool != "podman" {
		return exitError{125, "docker: 'images --format json' is podman's; the stand-in docker does not list"}
	}
	return e.encode(rows)
}

// NoRegistryEnv, set to 1, makes the stand-in builders behave as on a host
// with no registry: a build whose base (FROM, through ARG BASE_IMAGE and
// --build-arg) is not in the builder's images fails with podman's raw pull
// error. Unset, every base is there.
const NoRegistryEnv = "ASB_FAKE_NO_REGISTRY"

var argBaseRe = regexp.MustCompile(`(?m)^ARG BASE_IMAGE=(\S+)$`)

func (e *env) needBase(tool string, dockerfile []byte, buildArgs []string) error {
	if os.Getenv(NoRegistryEnv) != "1" {
		return nil
	}
	m := argBaseRe.FindSubmatch(dockerfile)
	if m == nil {
		return nil
	}
	base := string(m[1])
	for _, a := range buildArgs {
		if v, ok := strings.CutPrefix(a, "BASE_IMAGE="); ok {
			base = v
		}
	}
	if e.exists(tool+"-images", base) {
		return nil
	}
	return fail("Error: creating build container: initializing source docker://%s: pinging container registry registry-1.docker.io: "+
		"Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host", base)
}
