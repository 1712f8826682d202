package fakes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
		sum := sha256.Sum256(df)
		img := builtImage{Tag: tags[0], ID: hex.EncodeToString(sum[:8])}
		fmt.Fprintf(e.stdout, "Successfully built %s\nSuccessfully tagged %s\n", img.ID, img.Tag)
		return e.put(kind, tags[0], img)
	case "image":
		if len(args) >= 3 && args[1] == "inspect" {
			var img builtImage
			if err := e.get(kind, args[2], &img); err != nil {
				return fail("Error: No such image: %s", args[2])
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
	case "version", "info":
		_, err := fmt.Fprintf(e.stdout, "fake %s\n", tool)
		return err
	}
	return exitError{125, fmt.Sprintf("%s: unknown command %q", tool, args[0])}
}
