package outer

import (
	"maps"
	"slices"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/internal/linerec"
)

// A pass is read at every warm run, so it is lines (internal/linerec):
//
//	asb-warm-pass 1
//	key HEX
//	sum HEX
//	mac HEX           (none: no fingerprint)
//	index "PATH"      (the git index, whose stamp is among the stamps)
//	var "NAME" "VALUE"
//	ref "NAME"
//	stamp "PATH" DEV INO SIZE MTIME CTIME MODE MISSING
//
// Anything else (another format, a damaged line) makes it none.
const warmPassFormat = "asb-warm-pass 1"

func (p *WarmPass) encode(key string) []byte {
	w := linerec.NewWriter(warmPassFormat)
	w.Line("key", key)
	w.Line("sum", p.Sum)
	if p.EnvMAC != "" {
		w.Line("mac", p.EnvMAC)
	}
	if p.index != "" {
		w.Line("index", p.index)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Vars)) {
		w.Line("var", k, p.Vars[k])
	}
	for _, r := range p.Refs {
		w.Line("ref", r)
	}
	for _, f := range slices.Sorted(maps.Keys(p.stamps)) {
		s := p.stamps[f]
		w.Line("stamp", f, s.Dev, s.Ino, s.Size, s.ModNs, s.ChangNs, s.Mode, s.Missing)
	}
	return w.Bytes()
}

// decodeWarmPass reads a pass of key; ok is false for anything else.
func decodeWarmPass(raw []byte, key string) (*WarmPass, bool) {
	r := linerec.NewReader(raw, warmPassFormat)
	if r == nil {
		return nil, false
	}
	p := &WarmPass{Vars: map[string]string{}, stamps: map[string]folderfs.Stamp{}}
	gotKey := ""
	for tag, ok := r.Next(); ok; tag, ok = r.Next() {
		switch tag {
		case "key":
			gotKey = r.Str()
		case "sum":
			p.Sum = r.Str()
		case "mac":
			p.EnvMAC = r.Str()
		case "index":
			p.index = r.Str()
		case "var":
			k := r.Str()
			p.Vars[k] = r.Str()
		case "ref":
			p.Refs = append(p.Refs, r.Str())
		case "stamp":
			f := r.Str()
			s := folderfs.Stamp{Dev: r.Uint(), Ino: r.Uint(), Size: r.Int(), ModNs: r.Int(), ChangNs: r.Int()}
			mode := r.Uint()
			s.Mode, s.Missing = uint32(mode), r.Bool()
			if mode > 1<<32-1 {
				r.Fail()
			}
			p.stamps[f] = s
		default:
			r.Fail()
		}
	}
	return p, r.OK() && gotKey == key && p.Sum != "" && len(p.stamps) > 0
}
