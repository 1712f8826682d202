package folderfs

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sync"
)

// OwnFolders are the folders of an outer folder that hold what asb and its
// engine keep for themselves: .asb/ (this machine's state: the host
// repository, the secrets' stamps and key, the home volume's name, the warm
// records), .task/ (go-task's checksums of the image's sources) and
// .asb-base/ (the bytes asb rendered, which sync and update merge against).
// Each is a folder of the outer folder itself, or missing; never a link.
// os.Root follows a link that stays inside the folder, and a committed
// `.asb -> workspace/.asb` would hand that state to the agent's VM, which
// writes workspace/: the host repository's config and objects, the home
// volume another project's VM mounts, the secrets' key.
var OwnFolders = []string{StateDir, ".task", ".asb-base"}

// OwnLinkError is one of OwnFolders found as a link.
type OwnLinkError struct {
	Name   string
	Target string
}

func (e *OwnLinkError) Error() string {
	return fmt.Sprintf("not supported by asb: %s is a link (to %s): asb keeps its own records in %s/, which must be a folder of the outer folder itself, because through a link (into workspace/, say) the agent's VM could write them; remove the link (and git rm --cached %s, if a commit brought it), then run asb again",
		e.Name, e.Target, e.Name, e.Name)
}

// checkOwn refuses a root whose own folders are links (Open calls it, so
// no command reads or writes through one).
func checkOwn(r *os.Root) error {
	for _, n := range OwnFolders {
		fi, err := r.Lstat(n)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, _ := r.Readlink(n)
		return &OwnLinkError{Name: n, Target: target}
	}
	return nil
}

// StateEntries are the names asb writes directly under .asb/: its records
// and locks, and its folders (the host repository, the sessions' checkouts,
// the warm records, …). Without a record of what git tracks, a file of
// .asb/ by any other name is in the trust set (outer/trust_untracked.go):
// no asb wrote it, and the Taskfile may run it. A path asb writes under
// .asb/ starts with one of them (TestStateEntries in runner and
// outer hold that).
var StateEntries = []string{
	"state.yaml", "state.lock", "run.lock", "git.lock", "serve.json", "taskfile.json", "generated.json",
	"secrets.key", "secrets.stamp",
	"git", "import", "sessions", "review", "notify", "msb", "warm", "secrets-stamps",
}

// stateTemp are the names of asb's writes under way directly under .asb/:
// a staging file of one of its files (.NAME.asb-HEX, CreateTemp) and the
// host repository being made (git.new-N).
var stateTemp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\.(.+)` + regexp.QuoteMeta(StagingInfix) + `[0-9a-f]{16}|git\.new-[0-9]+)$`)
})

// IsStateEntry reports whether name, an entry directly under .asb/, is
// one asb writes (StateEntries, or a write of one under way).
func IsStateEntry(name string) bool {
	if slices.Contains(StateEntries, name) {
		return true
	}
	m := stateTemp().FindStringSubmatch(name)
	return m != nil && (m[2] == "" || slices.Contains(StateEntries, m[2]))
}
