# shellcheck shell=bash
# Loopback ports for the test servers (sourced by pg-start.sh, etcd-start.sh).
#
# Ports are drawn below the kernel's ephemeral range when there is room: a
# port there may be the local end of someone's outgoing connection, which no
# probe sees but which makes a later bind fail, and PostgreSQL is restarted
# on its port after every crash of a drill.

port_is_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

read -r _eph_low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || _eph_low=0
if [ "${_eph_low:-0}" -gt 21000 ]; then
    port_base=20000 port_span=$((_eph_low - 20000))
else
    port_base=20000 port_span=40000
fi

# A port drawn at random from the range, not checked.
random_port() {
    echo $((port_base + RANDOM % port_span))
}
