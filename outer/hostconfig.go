package outer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// HostFile is a settings file of the agent read from the host, to be
// written under the agent's config folder of the outer folder.
type HostFile struct {
	Rel     string // slash path below the agent's config folder
	Content []byte
}

// HostSkip is an entry of the host's config folder that is not copied.
type HostSkip struct {
	Rel, Why string
}

// maxHostFiles bounds what one import reads: a settings folder is small.
const maxHostFiles = 500

// ReadHostConfig reads the agent's settings from its folder under home, as
// hc names them: the entries of hc.Copy (files, or folders of files).
// Every other entry is skipped and named with the reason. It reads nothing
// else of home. A missing folder is an error that says where asb looked.
// The files may hold credentials: the caller applies schema's credential
// rule (schema.FindCredentials) before anything is written.
func ReadHostConfig(home string, hc *schema.HostConfig) ([]HostFile, []HostSkip, error) {
	if home == "" {
		return nil, nil, errors.New("--import-host-config: $HOME is not set, so the agent's settings cannot be found")
	}
	root := filepath.Join(home, filepath.FromSlash(hc.From))
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, fmt.Errorf("--import-host-config: %s: %w (the agent keeps its settings there)", tildeHome(root, home), err)
	}
	var files []HostFile
	var skipped []HostSkip
	for _, e := range entries {
		name := e.Name()
		switch why, private := hc.Private[name]; {
		case private:
			skipped = append(skipped, HostSkip{name, why})
		case !slices.Contains(hc.Copy, name):
			skipped = append(skipped, HostSkip{name, "not one of the settings asb copies (" + strings.Join(hc.Copy, ", ") + ")"})
		default:
			f, s, err := readHostEntry(root, name)
			if err != nil {
				return nil, nil, err
			}
			files, skipped = append(files, f...), append(skipped, s...)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Rel < files[j].Rel })
	return files, skipped, nil
}

// readHostEntry reads one entry of hc.Copy: a regular file, or every
// regular file below a folder; links are not followed.
func readHostEntry(root, name string) ([]HostFile, []HostSkip, error) {
	var files []HostFile
	var skipped []HostSkip
	err := filepath.WalkDir(filepath.Join(root, name), func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case err != nil:
			skipped = append(skipped, HostSkip{rel, "cannot be read: " + err.Error()})
			return nil
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			skipped = append(skipped, HostSkip{rel, "not a regular file (asb copies files, never links)"})
			return nil
		case len(files) >= maxHostFiles:
			return fmt.Errorf("--import-host-config: %s holds more than %d files; copy the settings you want by hand", path.Dir(rel), maxHostFiles)
		}
		data, err := schema.ReadFile(p)
		if err != nil {
			skipped = append(skipped, HostSkip{rel, err.Error()})
			return nil
		}
		files = append(files, HostFile{Rel: rel, Content: data})
		return nil
	})
	return files, skipped, err
}

// tildeHome writes p with home as ~, for messages.
func tildeHome(p, home string) string {
	if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
		return "~/" + filepath.ToSlash(rel)
	}
	return p
}
