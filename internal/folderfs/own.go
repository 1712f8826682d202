package folderfs

import (
	"fmt"
	"io/fs"
	"os"
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
