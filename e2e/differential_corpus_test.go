package e2e

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// The differential corpus: sandbox.yaml files made from one good outer
// folder's sandbox.yaml by replacing or adding keys, each with forms msb
// reads and forms it refuses. Every single change is one file; pairs of
// them, drawn with a fixed seed, make the rest.

// diffBase is the good sandbox.yaml every file starts from, by section.
var diffBase = map[string]string{
	"image":   "image: \"p:opencode-latest\"\n",
	"cpus":    "cpus: 2\n",
	"memory":  "memory: \"4G\"\n",
	"workdir": "workdir: /workspace\n",
	"mounts":  "mounts:\n  - bind: ./workspace\n    target: /workspace\n  - bind: ./opencode\n    target: /home/dev/.config/opencode\n    readonly: true\n",
	"network": "network:\n  allow:\n    - opencode.ai\n",
}

// diffKeys are the section order of a file.
var diffKeys = []string{"image", "pull_policy", "registry", "cpus", "memory", "max_duration", "idle_timeout",
	"rlimits", "workdir", "shell", "user", "hostname", "security", "entrypoint", "cmd", "env", "labels", "init",
	"mounts", "patch_files", "patches", "network", "secrets", "secret_violation_action", "scripts", "ports", "zz"}

// diffHosts are names for network.allow, network.deny and tls.bypass.
var diffHosts = []string{"example.com", "Example.COM.", "*.example.com", "*.co.uk", "*.workers.dev", "*.com",
	"a..com", "-a.example.com", "a_b.example.com", "*.*.example.com", "example.com:443", "localhost",
	"1.2.3.4", "https://a.example.com", "xn--bcher-kva.example", ".example.com", "*"}

// diffValues are the forms of each key (a whole section each).
var diffValues = map[string][]string{
	"image":                   {"image: {oci: x}", "image: \"\"", "image: 1"},
	"pull_policy":             {"pull_policy: never", "pull_policy: missing", "pull_policy: if-missing"},
	"registry":                {"registry: {username: a}", "registry: {username: a, password_env: HOME}"},
	"cpus":                    {"cpus: 1", "cpus: 0", "cpus: 255", "cpus: 256", "cpus: \"2\"", "cpus: 2.5", "cpus: -1", "cpus: 0x2"},
	"memory":                  {"memory: \".5G\"", "memory: \"1.5G\"", "memory: \"1.5M\"", "memory: \"5.\"", "memory: \"0\"", "memory: \"128M\"", "memory: \"4096\"", "memory: \"99999999999G\"", "memory: \"2048G\"", "memory: 4G", "memory: 4096", "memory: \"512m\"", "memory: \"4194304G\"", "memory: \"4GiB\""},
	"max_duration":            {"max_duration: 2h", "max_duration: 90s", "max_duration: 1d", "max_duration: \"10\""},
	"idle_timeout":            {"idle_timeout: 30m", "idle_timeout: 1.5h"},
	"rlimits":                 {"rlimits: [{resource: nofile, soft: 10}]", "rlimits: [{resource: bogus, soft: 1}]"},
	"workdir":                 {"workdir: \"\"", "workdir: relative", "workdir: /home/dev"},
	"shell":                   {"shell: /bin/bash", "shell: \"\""},
	"user":                    {"user: dev", "user: \"\"", "user: 1000"},
	"hostname":                {"hostname: box", "hostname: \"\"", "hostname: \"bad host!\""},
	"security":                {"security: default", "security: restricted", "security: strict"},
	"entrypoint":              {"entrypoint: [/bin/sh]", "entrypoint: [\"\"]", "entrypoint: /bin/sh", "entrypoint: []"},
	"cmd":                     {"cmd: [sh, -c, 'echo hi']", "cmd: [\"\"]", "cmd: []", "cmd: \"echo hi\""},
	"env":                     {"env: {A: \"1\"}", "env: {MSB_X: a}", "env: {A: 1}", "env: {A: \"${HOME}\"}", "env: {A: \"${ASB_DIFF_UNSET}\"}", "env: {\"a-b\": x}", "env: [\"A=1\"]", "env: {A: \"${A:-x}\"}", "env: {A: \"\"}"},
	"labels":                  {"labels: {team: x}", "labels: {\"\": x}", "labels: [a]"},
	"init":                    {"init: {cmd: /sbin/init}", "init: /sbin/init"},
	"patch_files":             {"patch_files: [./p.yaml]", "patch_files: ./p.yaml"},
	"patches":                 {"patches: [{text: {path: /a, content: x}}]", "patches: [{copy_file: {src: ./src/f, dst: /f}}]", "patches: [{bogus: {}}]"},
	"secrets":                 {"secrets: {FOO: {value: x, allow: [a.example.com]}}"},
	"secret_violation_action": {"secret_violation_action: block", "secret_violation_action: BlockAndLog", "secret_violation_action: bogus"},
	"scripts":                 {"scripts: {a: \"echo\"}", "scripts: {\"a/b\": x}", "scripts: {\"\": x}"},
	"ports":                   {"ports: [\"8080:80\"]", "ports: [\"[::1]:8080:80\"]", "ports: [\"::1:8080:80\"]", "ports: [\"0:80\"]", "ports: [\"80\"]", "ports: [\"8080:80/sctp\"]", "ports: [\"1.2.3.4:80:80\"]", "ports: \"8080:80\"", "ports: [\"9000:9000/udp\"]"},
	"network": {"network: open", "network: none", "network: public", "network: everything", "network: {}",
		"network: {dns: {nameservers: [\"1.1.1.1\"]}}", "network: {dns: {nameservers: [bogus]}}", "network: {dns: {rebind_protection: false}}",
		"network: {dns: {rebind_protection: true, query_timeout: 5s}}", "network: {tls: {verify_upstream: false}}",
		"network: {tls: {bypass: [x.example.com]}}", "network: {tls: {bypass: [x.example.com]}} # asb: allow-tls-bypass",
		"network: {tls: {enabled: false}}", "network: {tls: {block_quic: true}}", "network: {strict: yes}", "network: {strict: true}",
		"network: {max_connections: -1}", "network: {max_connections: 5, max_tcp_connections: 3}", "network: {trust_host_cas: true}",
		"network: {ports: [\"8080:80\"]}", "network: {allowed: [a.com]}", "network: {allow: a.example.com}"},
	"zz": {"bogus: 1", "cpus: ${ASB_DIFF_UNSET}", "${ASB_DIFF_UNSET}: 1"},
}

// diffMounts are entries added to the good mounts list.
var diffMounts = []string{"\"./src:/data\"", "\"./src:/data:ro,ro\"", "\"./src:/data:rw,ro\"", "\"./src:/data:uid=1\"",
	"\"./src:/data:uid=1,gid=1\"", "\"./src:/data:quota=1G\"", "\"./src:/data:size=1G\"", "\"./src:/data:\"",
	"\"./src:/data:noexec,noexec\"", "\"vol:/data\"", "\"vol:/data\" # asb: allow-volume", "{named: v, target: /data}",
	"{named: v, target: /data, create: ensure-exists} # asb: allow-volume", "{disk: ./x.img, target: /d}",
	"{tmpfs: {size: 64M}, target: /t}", "{tmpfs: {size: 1.5M}, target: /t}", "{tmpfs: {}, target: /t}",
	"{bind: \"\", target: /data}", "\"./src:/a/../b\"", "{bind: ./src, target: /d, stat_virtualization: off}",
	"{bind: /var/lib, target: /d}", "\"./src:/\"", "\"./src\"", "\"./src:data\"", "{bind: ./src, target: /d, mode: 1}",
	"{bind: ./src, named: v, target: /d}", "{bind: ./src}", "{bind: ./src, target: /d, readonly: on}",
	"{bind: ./src, target: /d, create: ensure-exists}", "{bind: \"${HOME}\", target: /d}", "\"src:/data\"",
	"\"./src:/data:host-perms=mirror\"", "\"./src:/data:quota=1G,host-perms=mirror\"", "\"./src:/data:stat-virt=relaxed,host-perms=mirror\"",
	"\"./src:/data:stat-virt=off,host-perms=mirror\"", "\"./src:/data:host-perms=Mirror\"", "\"./src:/data:host-perms=mirror,host-perms=private\"",
	"{bind: ./src, target: /d, host_permissions: mirror}", "{bind: ./src, target: /d, stat_virtualization: \"off\", host_permissions: mirror}",
	"{tmpfs: {size: 64M}, target: /t, host_permissions: mirror}"}

// diffCase is one generated file.
type diffCase struct {
	name string
	yaml string
}

// diffSingles returns one file per form: every key's forms, every host in
// allow, deny and tls.bypass, every extra mount.
func diffSingles() []map[string]string {
	var out []map[string]string
	keys := make([]string, 0, len(diffValues))
	for k := range diffValues {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range diffValues[k] {
			out = append(out, map[string]string{k: v + "\n"})
		}
	}
	for _, h := range diffHosts {
		q := fmt.Sprintf("%q", h)
		out = append(out,
			map[string]string{"network": "network:\n  allow:\n    - opencode.ai\n    - " + q + "\n"},
			map[string]string{"network": "network:\n  policy: public\n  deny: [" + q + "]\n"},
			map[string]string{"network": "network:\n  allow: [opencode.ai]\n  tls: {bypass: [" + q + "]} # asb: allow-tls-bypass\n"})
	}
	for _, m := range diffMounts {
		out = append(out, map[string]string{"mounts": diffBase["mounts"] + "  - " + m + "\n"})
	}
	return out
}

// diffCorpus is the whole corpus: the singles, then pairs drawn with seed.
func diffCorpus(seed uint64, pairs int) []diffCase {
	singles := diffSingles()
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	all := append([]map[string]string{}, singles...)
	for range pairs {
		a, b := singles[r.IntN(len(singles))], singles[r.IntN(len(singles))]
		m := map[string]string{}
		for k, v := range a {
			m[k] = v
		}
		for k, v := range b {
			if _, taken := m[k]; !taken {
				m[k] = v
			}
		}
		all = append(all, m)
	}
	out := make([]diffCase, 0, len(all))
	for i, change := range all {
		var b strings.Builder
		for _, k := range diffKeys {
			if v, ok := change[k]; ok {
				b.WriteString(v)
			} else if v, ok := diffBase[k]; ok {
				b.WriteString(v)
			}
		}
		out = append(out, diffCase{name: fmt.Sprintf("case-%03d", i), yaml: b.String()})
	}
	return out
}
