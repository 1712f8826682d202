package doctorcmd

import (
	"fmt"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/schema"
)

// folderNeeds are the disk limits of the outer folder asb doctor --boot
// runs in (vm:create and vm:start run it there): the root disk and the
// container disk in MSB_HOME, the workspace quota in the folder. Outside
// an outer folder there are none.
func folderNeeds(f *cmdutil.Factory) []host.DiskNeed {
	dir, err := cmdutil.FolderDir(f.Getwd, "")
	if err != nil {
		return nil
	}
	fo, err := cmdutil.OpenFolder(f, dir)
	if err != nil {
		return nil
	}
	msbHome := host.MSBHome(f.Host)
	var vm, ws host.DiskNeed
	vm.Path, ws.Path = msbHome, fo.Dir
	for _, l := range fo.LimitsOf() {
		if l.Value == "" {
			continue
		}
		mib, err := schema.ParseSize(l.Value)
		if err != nil {
			continue // asb validate reports it
		}
		what := fmt.Sprintf("%s %s", l.Name, l.Value)
		switch l.Name {
		case schema.LimitRootDisk, schema.LimitContainerDisk:
			vm.Bytes += uint64(mib) << 20
			vm.What = joinWhat(vm.What, what)
		case schema.LimitWorkspaceQuota:
			ws.Bytes += uint64(mib) << 20
			ws.What = joinWhat(ws.What, what)
		}
	}
	return []host.DiskNeed{vm, ws}
}

func joinWhat(a, b string) string {
	if a == "" {
		return b
	}
	return a + " + " + b
}
