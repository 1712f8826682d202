# lab.sh: the network lab's preparation of the nested guest, as root, for
# the sessions that use it (net/scenario.sh; the real image's, before
# prelude.sh). Runs after guestlib.sh. /data/net holds the lab (lab.json,
# ca.pem, addrs, dns) and /data/bin/netlab its servers.
#
# lab_up: the lab's addresses on lo (no network device: nothing leaves this
# guest), a route for msb's probe, the name server in resolv.conf (msb
# forwards the VM's DNS to it), the test CA in the CA bundle (msb verifies
# upstream TLS against it), the servers started in the background.
lab_up() {
	mkdir -p "$DATA/net/run"
	for a in $(cat "$DATA/net/addrs"); do ip addr add "$a/32" dev lo; done
	# msb gives the VM IPv4 only when the host has a route to 192.0.2.1
	# (it probes with a UDP connect): one, to lo, so nothing leaves.
	ip route add 192.0.2.0/24 dev lo
	echo "nameserver $(cat "$DATA/net/dns")" >/etc/resolv.conf
	cat "$DATA/net/ca.pem" >>/etc/ssl/certs/ca-certificates.crt
	"$DATA/bin/netlab" serve "$DATA/net/lab.json" "$DATA/net/run/ready" 2>"$DATA/net/run/serve.log" &
	i=0
	while [ ! -f "$DATA/net/run/ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	note lab "$(cat "$DATA/net/run/ready" 2>/dev/null || echo "not ready: $(cat "$DATA/net/run/serve.log")")"
}
