package kubeexport

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// crdSchema is one served version of a vendored CRD, ready to validate
// objects as the API server does.
type crdSchema struct {
	kind       string
	internal   *apiextensions.JSONSchemaProps
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// loadCRDs reads testdata/crds (agent-sandbox's published CRDs) by
// apiVersion/kind.
func loadCRDs(t *testing.T) map[string]*crdSchema {
	t.Helper()
	files, err := filepath.Glob("testdata/crds/*.yaml")
	if err != nil || len(files) != 4 {
		t.Fatalf("testdata/crds: %v files, %v; expected agent-sandbox's four CRDs", len(files), err)
	}
	out := map[string]*crdSchema{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil {
				continue
			}
			s := &crdSchema{kind: crd.Spec.Names.Kind, internal: &apiextensions.JSONSchemaProps{}}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, s.internal, nil); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if s.structural, err = structuralschema.NewStructural(s.internal); err != nil {
				t.Fatalf("%s: not a structural schema: %v", f, err)
			}
			if errs := structuralschema.ValidateStructural(nil, s.structural); len(errs) > 0 {
				t.Fatalf("%s: %v", f, errs.ToAggregate())
			}
			if s.validator, _, err = apiservervalidation.NewSchemaValidator(s.internal); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			s.cel = cel.NewValidator(s.structural, true, celconfig.PerCallLimit) // nil: the schema has no CEL rule
			out[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = s
		}
	}
	return out
}

// validateCR checks one custom resource, as YAML the export wrote, the
// way the API server's create (and an update to the same object) does:
// unknown fields (which strict field validation refuses), metadata,
// defaults, the OpenAPI schema, list types and the CEL rules.
func validateCR(t *testing.T, s *crdSchema, doc []byte) field.ErrorList {
	t.Helper()
	obj := map[string]any{}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &obj); err != nil {
		t.Fatal(err)
	}
	var errs field.ErrorList
	unknown := pruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range unknown {
		errs = append(errs, field.Invalid(field.NewPath(p), nil, "unknown field: the API server drops it, or refuses it under strict field validation"))
	}
	if e := objectmeta.Coerce(nil, obj, s.structural, true, false); e != nil {
		errs = append(errs, e)
	}
	errs = append(errs, rootMeta(t, obj)...)
	structuraldefaulting.Default(obj, s.structural)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, s.validator)...)
	errs = append(errs, objectmeta.Validate(context.Background(), nil, obj, s.structural, true)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	if s.cel != nil {
		celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
		celErrs, _ = s.cel.Validate(context.Background(), nil, s.structural, obj, obj, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...) // transition rules (oldSelf) run on update only
	}
	return errs
}

// rootMeta validates the object's metadata as the API server does for any
// namespaced object (names are DNS subdomains, labels valid).
func rootMeta(t *testing.T, obj map[string]any) field.ErrorList {
	t.Helper()
	m, ok := obj["metadata"]
	if !ok {
		return field.ErrorList{field.Required(field.NewPath("metadata"), "")}
	}
	b, _ := json.Marshal(m)
	var meta metav1.ObjectMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), m, err.Error())}
	}
	meta.Namespace = "default" // kubectl apply -n sets it
	return apimachineryvalidation.ValidateObjectMeta(&meta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

// TestVendoredCRDsMatchTheModule: testdata/crds is agent-sandbox's
// k8s/crds of the version go.mod requires, when the module is in the cache.
func TestVendoredCRDsMatchTheModule(t *testing.T) {
	dir := moduleDir(t, "sigs.k8s.io/agent-sandbox")
	files, _ := filepath.Glob("testdata/crds/*.yaml")
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(dir, "k8s", "crds", filepath.Base(f)))
		if err != nil {
			t.Fatalf("the module has no %s: copy its k8s/crds/*.yaml into testdata/crds", filepath.Base(f))
		}
		got, _ := os.ReadFile(f)
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s of the module go.mod requires: copy it again (testdata/crds/SOURCE.md)", f, dir)
		}
	}
}

// The validation finds what the API server refuses: an unknown field, a
// value below its minimum, a missing required field, and a CEL rule.
func TestValidationCatchesWhatTheAPIServerRefuses(t *testing.T) {
	crds := loadCRDs(t)
	pool := crds["extensions.agents.x-k8s.io/v1beta1/SandboxWarmPool"]
	claim := crds["extensions.agents.x-k8s.io/v1beta1/SandboxClaim"]
	for _, tc := range []struct {
		s    *crdSchema
		doc  string
		want string
	}{
		{pool, "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxWarmPool\nmetadata: {name: p}\nspec: {replicas: -1, sandboxTemplateRef: {name: t}}\n", "spec.replicas"},
		{pool, "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxWarmPool\nmetadata: {name: p}\nspec: {bogus: 1, sandboxTemplateRef: {name: t}}\n", "unknown field"},
		{claim, "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxClaim\nmetadata: {name: c}\nspec: {}\n", "spec.warmPoolRef"},
		{claim, "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxClaim\nmetadata: {name: Not_A_Name}\nspec: {warmPoolRef: {name: p}}\n", "metadata.name"},
	} {
		errs := validateCR(t, tc.s, []byte(tc.doc))
		if !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("%s: errors %v; want one on %s", tc.doc, errs, tc.want)
		}
	}
	sb := crds["agents.x-k8s.io/v1beta1/Sandbox"]
	if sb.cel == nil {
		t.Fatal("the Sandbox CRD has no CEL rule to run")
	}
	obj := map[string]any{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "metadata": map[string]any{"name": "s"},
		"spec": map[string]any{"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{}}}, "volumeClaimTemplates": []any{map[string]any{"metadata": map[string]any{"name": "home"}, "spec": map[string]any{}}}}}
	old := map[string]any{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "metadata": map[string]any{"name": "s"},
		"spec": map[string]any{"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{}}}}}
	errs, _ := sb.cel.Validate(context.Background(), nil, sb.structural, obj, old, celconfig.RuntimeCELCostBudget)
	if !strings.Contains(errs.ToAggregate().Error(), "immutable") {
		t.Errorf("CEL errors %v; want volumeClaimTemplates is immutable", errs)
	}
}
