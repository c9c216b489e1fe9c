# SPDX-License-Identifier: Apache-2.0
# Shell helpers for tests that run idmintd; source this file.

# wait_port PID PORT_FILE [TRIES]: wait for idmintd PID to write the port it
# listens on to PORT_FILE (it does once listening), checking every 50 ms up to
# TRIES times (default 200: 10 s). Prints the port and returns 0; returns 1
# when the daemon exits first or the time runs out.
wait_port() {
    local pid=$1 file=$2 tries=${3:-200} i port
    for ((i = 0; i < tries; i++)); do
        if [ -s "$file" ]; then
            port=$(tr -dc '0-9:' <"$file")
            port=${port##*:}
            # Read again a little later: a half-written file reads differently.
            sleep 0.02
            if [ -n "$port" ] && [ "$port" = "$(tr -dc '0-9:' <"$file" | sed 's/.*://')" ]; then
                echo "$port"
                return 0
            fi
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
