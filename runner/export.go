package runner

// The Kubernetes exporter. Rendering agent-sandbox resources from their Go
// types links Kubernetes' API packages (k8s.io/api, apimachinery), whose
// initialisation alone would cost every asb command; so, like the go-task
// engine, it lives in its own executable, asb-export, which
// `asb export kubernetes` runs.

// ExportName is the exporter's executable, installed beside asb.
const ExportName = "asb-export"

// ExportEnv names an exporter executable to use instead of the one beside
// asb (tests, development builds).
const ExportEnv = "ASB_EXPORT"

// FindExport returns the exporter's path, as FindEngine does the engine's.
func FindExport(getenv func(string) string, self func() (string, error)) (string, error) {
	return FindBeside(ExportName, ExportEnv, "asb export kubernetes needs "+ExportName+", asb's Kubernetes exporter", getenv, self)
}
