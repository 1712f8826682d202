// Package templates holds the embedded template trees asb renders: base/ is
// the layout every outer folder shares, agents/NAME/ one folder per agent
// preset (agent.yaml, its manifest, plus config/, the agent's config folder).
//
// File names ending in .tmpl are rendered with text/template and asb's own
// quoting functions (generator.Funcs), with
// [[ ]] as delimiters so that the Taskfile's own {{ }} pass through, and lose
// the suffix; a leading "dot-" becomes "." (dot-gitignore → .gitignore), so the
// tree itself never holds files git or docker would act on.
package templates

import "embed"

// FS is the template tree.
//
//go:embed all:base all:agents
var FS embed.FS
