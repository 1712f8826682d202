package outer

import (
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// mountView is how one mount reaches the guest, with the key table's
// verdict and the mount policy's plain refusals.
func (f *Folder) mountView(m schema.Mount) MountView {
	mv := MountView{Guest: m.Target, Access: "rw", Kind: m.Kind, Verdict: schema.Shown.String()}
	if m.Readonly {
		mv.Access = "ro"
	}
	switch m.Kind {
	case "bind":
		mv.Source = m.Bind
		if !m.Readonly {
			mv.Modes = "private"
			if m.HostPermissions == "mirror" {
				mv.Modes = "mirror"
			}
		}
		written := f.HostPath(m.Bind)
		mv.UnderHome = f.underHome(written)
		real, dir := schema.ResolvePath(filepath.Clean(written)), schema.ResolvePath(f.Dir)
		mv.Host = real
		link := schema.BindLink(f.Dir, written) // a link on the way: msb does not follow it
		if link != nil {
			mv.Via = written
		}
		mv.Outside = !mv.UnderHome && !schema.Within(real, dir)
		if strings.Contains(m.Bind, "${") {
			mv.Refused = "${…}: " + schema.ExpandRefused
		} else if re := f.mountRules().HostFolder(real, true); re != nil {
			mv.Refused = "it " + re.Why // refused even with consent
		} else if link != nil {
			mv.Refused = "it " + link.Why
		}
		if mv.Refused != "" {
			mv.Verdict, mv.Outside = schema.Refused.String(), false
		}
	case "named":
		mv.Source, mv.Verdict = m.Named, schema.Widening.String()
	case "tmpfs":
		mv.Source = "memory"
	case "disk":
		mv.Source, mv.Verdict = m.Disk, schema.Refused.String()
		mv.Refused = "a disk image file of your host"
	}
	return mv
}

// underHome reports whether a host path is under $HOME and outside this
// folder (which itself may well be under $HOME).
func (f *Folder) underHome(host string) bool {
	h := f.Getenv("HOME")
	if !filepath.IsAbs(h) {
		return false
	}
	real := schema.ResolvePath(filepath.Clean(host))
	return schema.Within(real, schema.ResolvePath(filepath.Clean(h))) && !schema.Within(real, schema.ResolvePath(f.Dir))
}
