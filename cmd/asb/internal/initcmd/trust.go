package initcmd

import (
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

func (o *Options) judge() outer.Judge {
	return outer.Judge{Templates: o.Templates, Getenv: o.Getenv, MachinePolicy: o.MachinePolicy, Agents: o.Agents}
}

// checkPolicy refuses, before anything is written, a folder whose flags
// ask for what the policy in force forbids: the plan's files are judged
// as validate judges the folder's.
func (o *Options) checkPolicy(dir string, plan *generator.Plan) error {
	pol, err := o.judge().Policy()
	if err != nil || pol.Empty() {
		return err
	}
	files := map[string][]byte{}
	for _, f := range plan.Files {
		if !f.Dir {
			files[f.Path] = f.Content
		}
	}
	probs := schema.CheckPolicy(dir, schema.CheckOptions{Overrides: files, Getenv: o.Getenv, Agents: o.Agents, Policy: pol})
	if len(probs) > 0 {
		return &outer.PolicyRefusedError{Dir: dir, Problems: probs}
	}
	return nil
}

// keepApproval notes the folder's verdict before init writes it; the
// returned func, called after, approves what init wrote: the answers (the
// user typed them), and the content too when the folder was new or
// approved before (a re-run of init in an approved folder). In a folder
// that was not approved, files init keeps as the user's stay unapproved
// until asb trust.
func (o *Options) keepApproval(dir string) func() error {
	j := o.judge()
	before, err := j.Check(dir)
	fresh := err != nil || len(before.Set.Files) == 0 // no folder, or nothing of one yet
	return func() error {
		after, err := j.CheckStored(dir) // approved as found: no render to compare
		if err != nil || after.Trusted || len(after.Refused) > 0 {
			return err
		}
		if fresh || before.Trusted {
			return after.Approve("asb init")
		}
		return after.Store.ApproveAnswers(dir, after.Set.AnswersHash())
	}
}
