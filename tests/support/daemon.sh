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

# start_listening PID_VAR PORT_VAR TRIES PORT_FILE LOG CMD...: run CMD (an
# idmintd that writes its port to PORT_FILE) in the background, its output
# appended to LOG, and wait for its port. A restart on the same port can find
# it busy for a moment, so a start that fails is killed and tried again, up to
# TRIES times. Sets the variables named PID_VAR (as soon as CMD runs, for the
# caller's cleanup) and PORT_VAR; returns 1 when every try failed.
start_listening() {
    local pid_var=$1 port_var=$2 tries=$3 file=$4 log=$5 try pid port
    shift 5
    for ((try = 0; try < tries; try++)); do
        rm -f "$file"
        "$@" >>"$log" 2>&1 3>&- &
        pid=$!
        printf -v "$pid_var" '%s' "$pid"
        if port=$(wait_port "$pid" "$file"); then
            printf -v "$port_var" '%s' "$port"
            return 0
        fi
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        printf -v "$pid_var" '%s' ""
        sleep 0.25
    done
    return 1
}
