# tls.sh: in the real image's VM (asb task vm:exec -- sh .tls.sh), Node.js
# and Bun (the opencode binary, which is Bun-compiled: BUN_BE_BUN=1 makes it
# the bun CLI) fetch https://opencode.ai/ through msb's TLS interception,
# each with its own CA store, and OPENCODE_API_KEY (the placeholder) in
# Authorization, which msb substitutes. One line each: RUNTIME STATUS
# [ISSUER] BODY, or RUNTIME error CODE MESSAGE; then the CA variables the
# VM's processes get (the image sets NODE_EXTRA_CA_CERTS too).
node -e '
const auth = { Authorization: "Bearer " + process.env.OPENCODE_API_KEY };
require("https").get("https://opencode.ai/tls/node", { headers: auth }, (r) => {
	const issuer = (r.socket.getPeerCertificate() || {}).issuer || {};
	let b = "";
	r.on("data", (d) => (b += d));
	r.on("end", () => console.log("node", r.statusCode, JSON.stringify(issuer.CN || ""), b.trim()));
}).on("error", (e) => { console.log("node error", e.code || "-", e.message); process.exitCode = 1; });
'
n=$?
BUN_BE_BUN=1 opencode -e '
try {
	const r = await fetch("https://opencode.ai/tls/bun", { headers: { Authorization: "Bearer " + process.env.OPENCODE_API_KEY } });
	console.log("bun", r.status, (await r.text()).trim());
} catch (e) {
	console.log("bun error", e.code || "-", e.message);
	process.exitCode = 1;
}
'
b=$?
echo "env NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS SSL_CERT_FILE=$SSL_CERT_FILE"
[ $n = 0 ] && [ $b = 0 ]
