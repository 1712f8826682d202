package doctorcmd

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/runner"
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

// folderChecks are the checks of the outer folder doctor runs in.
func folderChecks(f *cmdutil.Factory) []host.Check {
	if c := secretCommands(f); c != nil {
		return []host.Check{*c}
	}
	return nil
}

// CheckSecretCommands is the check of the outer folder's secrets whose
// value comes from a command recorded on this host (asb secret add --from).
const CheckSecretCommands = "secret commands"

// secretCommands checks that the program of each secret's command is
// found here, without running it (nil outside an outer folder, or when no
// secret has a command). A command that cannot run stops vm:create, so
// the check is blocking.
func secretCommands(f *cmdutil.Factory) *host.Check {
	dir, err := cmdutil.FolderDir(f.Getwd, "")
	if err != nil {
		return nil
	}
	missing := runner.SecretCommandsMissing(dir, f.Getenv)
	if len(missing) == 0 {
		return nil
	}
	names := make([]string, 0, len(missing))
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	c := &host.Check{Name: CheckSecretCommands, Status: host.StatusOK, Blocking: true}
	var found, bad []string
	for _, n := range names {
		if why := missing[n]; why != "" {
			bad = append(bad, n+": "+why)
		} else {
			found = append(found, n)
		}
	}
	if len(bad) > 0 {
		c.Status, c.Detail = host.StatusFail, strings.Join(bad, "; ")
		c.Fix = "install the program, or record another command: asb secret add NAME --allow HOST --from 'COMMAND' --force"
		return c
	}
	c.Detail = "found the program of each (not run): " + strings.Join(found, ", ")
	return c
}
