package outer

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/agents-sandbox/asb/schema"
)

// Judge decides whether an outer folder may run: the one place that does
// (docs/trust.md). Every command that runs or hands on a folder asks it.
type Judge struct {
	Templates fs.FS               // asb's templates: what a render is
	Getenv    func(string) string // $HOME, $XDG_STATE_HOME, $XDG_CONFIG_HOME
	// MachinePolicy is the administrator's policy file
	// (schema.MachinePolicyPath; "" for none, which only tests choose).
	MachinePolicy string
	// Agents are the agent presets (their config folders join the trust
	// set); nil: asb's own.
	Agents []schema.Agent
}

// Verdict is whether an outer folder may run, and why.
type Verdict struct {
	Dir     string
	Trusted bool
	Why     string     // "approved by you", "asb's render of answers you approved", or what is wrong
	Set     *TrustSet  // the folder's (nil when the verdict was cached)
	Render  *TrustSet  // asb's render, when it could be made
	Store   *Approvals // where approvals are kept
	// Refused are the policy's refusals: no approval overrides them.
	Refused []schema.Problem
	// Policy is the policy in force.
	Policy *schema.Policy
	// Last is the folder's latest approval (nil: none on this machine).
	Last *Approval
	// Cached: the verdict was the cache's (trust_cache.go).
	Cached bool
	judge  Judge
	stamps *stamps
}

// CheckTrust judges dir with asb's machine policy (for callers without a
// Factory: asb export kubernetes).
func CheckTrust(dir string, tree fs.FS, getenv func(string) string) (*Verdict, error) {
	return Judge{Templates: tree, Getenv: getenv, MachinePolicy: schema.MachinePolicyPath}.Check(dir)
}

// Policy loads the policy in force.
func (j Judge) Policy() (*schema.Policy, error) {
	return schema.LoadPolicy(j.MachinePolicy, schema.UserPolicyPath(j.getenv))
}

func (j Judge) getenv(k string) string {
	if j.Getenv == nil {
		return ""
	}
	return j.Getenv(k)
}

func (j Judge) agents() []schema.Agent {
	if j.Agents != nil {
		return j.Agents
	}
	return schema.DefaultAgents()
}

// Check judges the outer folder dir in full: the policy refuses what it
// forbids; else it runs when this user approved its content, or when it is
// exactly asb's render of answers this user approved (and widens nothing
// by a consent comment). A trusted verdict is cached (CheckTrustCached).
func (j Judge) Check(dir string) (*Verdict, error) {
	start := time.Now().UnixNano()
	v, sc, serr, err := j.checkStored(dir, start)
	if err != nil || v.Trusted || len(v.Refused) > 0 {
		return v, err
	}
	set, store := v.Set, v.Store
	if serr == nil {
		v.Last = store.Last(dir)
	}
	render, rerr := renderTrustSet(dir, j.Templates, sc)
	v.Render = render
	answersOK := serr == nil && store.AnswersApproved(dir, set.AnswersHash())
	switch {
	case rerr != nil:
		v.Why = "asb cannot render it from its record: " + rerr.Error()
	case set.Same(render) && !set.widens() && answersOK:
		v.Trusted, v.Why = true, "asb's own render of answers you approved ("+schema.RecordFile+")"
		// Recorded as approved content too, with the boundary it grants:
		// the next check is one stat, and a later change is compared with it.
		if err := v.Approve("asb's render of approved answers"); err != nil {
			return nil, err
		}
		j.saveCache(v, start)
		return v, nil
	case !answersOK && v.Last == nil:
		v.Why = "you have not approved this folder yet (a first clone, or a folder made elsewhere)"
	case !answersOK:
		v.Why = "its answers (" + schema.RecordFile + ") changed since you approved it"
	case renderedBefore(dir, set, render):
		v.Why = "it is what an earlier asb rendered from " + schema.RecordFile + ", and this asb renders it differently (its templates changed; the files that differ are as .asb-base/ records them): asb update brings the folder to this asb's render, or approve it as it is"
	default:
		v.Why = "it differs from what asb renders from " + schema.RecordFile + ", and you have not approved this content"
	}
	if serr != nil {
		return nil, serr
	}
	return v, nil
}

// CheckStored judges dir by the policy and this user's stored approvals
// alone, without asb's render: for a caller about to approve what it finds
// (asb init, an edit asb made of an approved folder). Where it says not
// trusted, a full Check might trust the folder as asb's render of approved
// answers; approving it then records the same content.
func (j Judge) CheckStored(dir string) (*Verdict, error) {
	v, _, serr, err := j.checkStored(dir, time.Now().UnixNano())
	if err != nil || v.Trusted || len(v.Refused) > 0 {
		return v, err
	}
	if serr != nil {
		return nil, serr
	}
	return v, nil
}

// checkStored is the part of a check that needs no render: the policy's
// refusals, then this user's approval of the content (cached when found).
// serr is why there is no approval store ($HOME unset).
func (j Judge) checkStored(dir string, start int64) (v *Verdict, sc trustScope, serr, err error) {
	pol, err := j.Policy()
	if err != nil {
		return nil, sc, nil, err
	}
	sc = newScope(j.agents())
	set, st, err := readTrustSet(dir, sc)
	if err != nil {
		return nil, sc, nil, err
	}
	store, serr := ApprovalStore(j.getenv)
	v = &Verdict{Dir: dir, Set: set, Store: store, Policy: pol, judge: j, stamps: st}
	if !pol.Empty() {
		v.Refused = schema.CheckPolicy(dir, schema.CheckOptions{Getenv: j.Getenv, Agents: j.agents(), Policy: pol})
	}
	if len(v.Refused) > 0 {
		v.Why = "the policy forbids what it asks for (" + v.Refused[0].Msg + ")"
		return v, sc, serr, nil
	}
	if serr == nil {
		store.stamp(st, store.setPath(dir, set.Hash()))
		if store.Approved(dir, set.Hash()) {
			v.Trusted, v.Why = true, "approved by you"
			j.saveCache(v, start)
		}
	}
	return v, sc, serr, nil
}

// PolicyInForce is the policy the verdict was judged under. A cached
// verdict holds none (the policy files' stamps held, so it is the one in
// force now): it is loaded then.
func (v *Verdict) PolicyInForce() (*schema.Policy, error) {
	if v.Policy != nil || !v.Cached {
		return v.Policy, nil
	}
	return v.judge.Policy()
}

// Approve records this user's approval of the folder's content and
// answers, with the boundary it grants. A folder the policy refuses is
// never approved.
func (v *Verdict) Approve(how string) error {
	if len(v.Refused) > 0 {
		return &PolicyRefusedError{Dir: v.Dir, Problems: v.Refused}
	}
	if v.Store == nil {
		return errors.New("no state folder to keep approvals in: set $HOME or $XDG_STATE_HOME")
	}
	f, err := Open(v.Dir, Options{Getenv: v.judge.Getenv, Agents: v.judge.agents()})
	if err != nil {
		return err
	}
	ap := &Approval{Dir: resolvedDir(v.Dir), Hash: v.Set.Hash(), Answers: v.Set.AnswersHash(), At: time.Now().UTC(),
		How: how, Grants: GrantsOf(f), Files: v.Set.Digests()}
	return v.Store.Approve(ap)
}

// ApproveEdit keeps an approved folder approved across an edit asb made
// for the user (secret add, network allow, agent add, update, a re-run of
// init): when before was trusted, the content and answers after it are
// approved too. An edit never approves a folder that was not trusted
// before it, nor one the policy refuses after it.
func ApproveEdit(dir string, before *Verdict, j Judge) error {
	if before == nil || !before.Trusted || before.Store == nil {
		return nil // not trusted, or no state folder to keep approvals in
	}
	after, err := j.CheckStored(dir)
	if err != nil {
		return err
	}
	if after.Trusted || len(after.Refused) > 0 {
		return nil
	}
	return after.Approve("an edit by asb of an approved folder")
}

// NotTrustedError is a folder asb refuses to run.
type NotTrustedError struct {
	Dir string
	Why string
}

func (e *NotTrustedError) Error() string {
	return fmt.Sprintf("refused: this outer folder is not approved to run: %s. Look at what it would grant and run (above, or asb trust --show), then approve it with: asb trust -d %s", e.Why, path.Clean(e.Dir))
}

// IsNotTrusted reports whether err is a NotTrustedError.
func IsNotTrusted(err error) bool {
	var nt *NotTrustedError
	return errors.As(err, &nt)
}

// PolicyRefusedError is a folder that asks for more than the policy in
// force allows: refused whatever its approval.
type PolicyRefusedError struct {
	Dir      string
	Problems []schema.Problem
}

func (e *PolicyRefusedError) Error() string {
	msg := fmt.Sprintf("refused: %s would ask for what the policy in force forbids (no approval changes that; asb doctor names the policy files):", path.Clean(e.Dir))
	for _, p := range e.Problems {
		msg += "\n  " + p.String()
	}
	return msg
}

// PolicyIntroduced are the policy's refusals an update plan would bring
// into the folder dir (asb agent add: another agent's hosts and key):
// those of the files after it that the files before it do not have.
func (u *UpdatePlan) PolicyIntroduced(j Judge) ([]schema.Problem, error) {
	pol, err := j.Policy()
	if err != nil || pol.Empty() {
		return nil, err
	}
	opts := schema.CheckOptions{Getenv: j.Getenv, Agents: j.agents(), Policy: pol}
	before := schema.CheckPolicy(u.dir, opts)
	opts.Overrides = map[string][]byte{}
	for _, s := range u.Steps {
		if s.After != nil {
			opts.Overrides[s.Path] = s.After
		}
	}
	seen := map[string]int{}
	for _, p := range before {
		seen[p.File+"\x00"+p.Field+"\x00"+p.Msg]++
	}
	var out []schema.Problem
	for _, p := range schema.CheckPolicy(u.dir, opts) {
		k := p.File + "\x00" + p.Field + "\x00" + p.Msg
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		out = append(out, p)
	}
	return out, nil
}
