package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/agents-sandbox/asb/host"
)

// Owner is whose a VM, volume or image is, as asb's labels say. Folder ""
// is not asb's (or asb cannot tell: a volume or image no labelled VM uses).
type Owner struct {
	Folder  string `json:"folder"`
	Session string `json:"session"`
	Agent   string `json:"agent"`
	// FolderGone: the outer folder is no longer on this machine.
	FolderGone bool `json:"folder_gone"`
}

// FleetVM is a VM with its owner and the bytes its disk takes.
type FleetVM struct {
	Sandbox
	Owner
	HomeVolume string `json:"home_volume"`
	Bytes      int64  `json:"disk_bytes"`
}

// FleetVolume is a volume with its owner, the VMs that mount it, and its
// bytes (measured: msb 0.7.2 does not).
type FleetVolume struct {
	Volume
	Owner
	UsedBy []string `json:"used_by"`
	Bytes  int64    `json:"disk_bytes"`
}

// FleetImage is an image in msb's cache with its owner and the VMs that
// use it. Bytes is msb's size_bytes, 0 for a second reference to a digest
// already counted (references share their layers).
type FleetImage struct {
	Image
	Owner
	UsedBy []string `json:"used_by"`
	Bytes  int64    `json:"disk_bytes"`
}

// Fleet is every VM, volume and image of one msb state folder, each
// told apart by the outer folder it belongs to.
type Fleet struct {
	Home    string        `json:"msb_home"`
	VMs     []FleetVM     `json:"vms"`
	Volumes []FleetVolume `json:"volumes"`
	Images  []FleetImage  `json:"images"`
	// The builder's images and cache (LoadBuilder; empty until then).
	Builder       string         `json:"builder,omitempty"`
	BuilderImages []BuilderImage `json:"builder_images,omitempty"`
	BuilderCache  int64          `json:"builder_cache_bytes"`
}

// LoadFleet reads msb's listings and measures the disks; exists says
// whether an outer folder is still there (nil: os.Stat).
func LoadFleet(ctx context.Context, m MSB, exists func(string) bool) (Fleet, error) {
	if exists == nil {
		exists = dirExists
	}
	vms, err := m.Sandboxes(ctx)
	if err != nil {
		return Fleet{}, err
	}
	vols, err := m.VolumeInfo(ctx)
	if err != nil {
		return Fleet{}, err
	}
	imgs, err := m.Images(ctx)
	if err != nil {
		return Fleet{}, err
	}
	f := Fleet{Home: m.Home()}
	for _, vm := range vms {
		fv := FleetVM{Sandbox: vm, Owner: ownerOf(vm.Labels, exists)}
		if fv.Folder != "" {
			fv.HomeVolume = vm.Labels[LabelHome]
		}
		fv.Bytes, err = host.DiskUsage(filepath.Join(f.Home, "sandboxes", vm.Name))
		if err != nil {
			return Fleet{}, err
		}
		f.VMs = append(f.VMs, fv)
	}
	if f.Volumes, err = attributeVolumes(f.Home, vols, f.VMs); err != nil {
		return Fleet{}, err
	}
	f.Images = attributeImages(imgs, f.VMs)
	f.attributeBySlug()
	f.countDigests()
	return f, nil
}

// ownerOf reads asb's labels. A VM without a usable folder label is not
// asb's: labels are any VM creator's to set, so a value that is not a
// clean absolute path, or holds control characters, is not trusted.
func ownerOf(labels map[string]string, exists func(string) bool) Owner {
	folder := labels[LabelFolder]
	if folder == "" || !filepath.IsAbs(folder) || filepath.Clean(folder) != folder || hasControl(folder) {
		return Owner{}
	}
	return Owner{Folder: folder, Session: labels[LabelSession], Agent: labels[LabelAgent], FolderGone: !exists(folder)}
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// attributeVolumes gives each volume the owner of the asb VMs that name it
// their home (the folder's own VM before a session's) and measures it.
func attributeVolumes(home string, vols []Volume, vms []FleetVM) ([]FleetVolume, error) {
	out := make([]FleetVolume, 0, len(vols))
	for _, v := range vols {
		fv := FleetVolume{Volume: v, UsedBy: []string{}}
		for _, vm := range vms {
			if vm.Folder == "" || vm.HomeVolume != v.Name {
				continue
			}
			fv.UsedBy = append(fv.UsedBy, vm.Name)
			if fv.Folder == "" || fv.Session != "" && vm.Session == "" {
				fv.Owner = vm.Owner
			}
		}
		n, err := host.DiskUsage(filepath.Join(home, "volumes", v.Name))
		if err != nil {
			return nil, err
		}
		fv.Bytes = max(n, v.Used)
		out = append(out, fv)
	}
	return out, nil
}

// attributeImages gives each image the owner of the asb VMs created from
// it or from another reference to its digest (a docker tar loads its own
// tag beside asb's), and the VMs that use it so.
func attributeImages(imgs []Image, vms []FleetVM) []FleetImage {
	out := make([]FleetImage, 0, len(imgs))
	for _, img := range imgs {
		fi := FleetImage{Image: img, UsedBy: []string{}}
		for _, vm := range vms {
			if !sameImage(imgs, img, vm.Image) {
				continue
			}
			fi.UsedBy = append(fi.UsedBy, vm.Name)
			if fi.Folder == "" && vm.Folder != "" {
				fi.Owner = vm.Owner
				fi.Session = "" // an image is the folder's, whichever session uses it
			}
		}
		out = append(out, fi)
	}
	return out
}

// sameImage: ref names img, or another reference to img's digest.
func sameImage(imgs []Image, img Image, ref string) bool {
	if normalRef(ref) == normalRef(img.Ref) {
		return true
	}
	for _, other := range imgs {
		if normalRef(other.Ref) == normalRef(ref) {
			return img.Digest != "" && other.Digest == img.Digest
		}
	}
	return false
}

// countDigests gives each digest's size to one of its references (an
// attributed one first): references share their layers.
func (f *Fleet) countDigests() {
	counted := map[string]bool{}
	for _, pass := range []bool{true, false} {
		for i, img := range f.Images {
			if (img.Folder != "") != pass || img.Digest != "" && counted[img.Digest] {
				continue
			}
			f.Images[i].Bytes = img.Size
			counted[img.Digest] = true
		}
	}
}

// normalRef applies msb's rule that a bare name:tag is docker.io/library's.
func normalRef(ref string) string {
	if strings.Contains(ref, "/") {
		return ref
	}
	return "docker.io/library/" + ref
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Folders lists the outer folders the fleet knows, sorted.
func (f Fleet) Folders() []string {
	var out []string
	for _, vm := range f.VMs {
		if vm.Folder != "" && !slices.Contains(out, vm.Folder) {
			out = append(out, vm.Folder)
		}
	}
	slices.Sort(out)
	return out
}

// slugOwners maps each folder's slug (from its VMs' image) to the folder.
func (f *Fleet) slugOwners() map[string]Owner {
	owners := map[string]Owner{}
	for _, vm := range f.VMs {
		if s := slugOf(vm.Image); s != "" && vm.Folder != "" {
			owners[s] = Owner{Folder: vm.Folder, Agent: vm.Agent, FolderGone: vm.FolderGone}
		}
	}
	return owners
}

// slugOf is the outer folder's slug in an image reference of asb's
// (<slug>:<agent>-latest, or the builder's tag that a docker tar brings
// along, agents-sandbox/runner-<slug>:<agent>-latest), or "".
func slugOf(ref string) string {
	repo, tag, ok := strings.Cut(strings.TrimPrefix(normalRef(ref), "docker.io/library/"), ":")
	repo = strings.TrimPrefix(strings.TrimPrefix(repo, "localhost/"), "agents-sandbox/runner-")
	if !ok || strings.Contains(repo, "/") || !strings.HasSuffix(tag, "-latest") {
		return ""
	}
	return repo
}

// attributeBySlug gives a volume or image no VM uses the owner of the
// folder whose slug its name carries (asb names them <slug>-<agent>-<time>
// and <slug>:<agent>-latest), so what a removed VM left is still told
// apart. The session is not known from a name.
func (f *Fleet) attributeBySlug() {
	owners := f.slugOwners()
	for i, img := range f.Images {
		if o, ok := owners[slugOf(img.Ref)]; ok && img.Folder == "" {
			f.Images[i].Owner = o
		}
	}
	for i, v := range f.Volumes {
		if v.Folder != "" {
			continue
		}
		for s, o := range owners {
			if strings.HasPrefix(v.Name, s+"-") {
				f.Volumes[i].Owner = o
			}
		}
	}
}
