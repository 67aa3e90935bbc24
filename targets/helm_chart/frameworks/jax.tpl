{{- else if eq $fw "jax" }}
{{- $fwEnv = append $fwEnv (dict "name" "PYTHONUNBUFFERED" "value" "1") }}
{{- $fwEnv = append $fwEnv (dict "name" "COORDINATOR_PORT" "value" (toString (get $t.ports "worker"))) }}
{{- $fwEnv = append $fwEnv (dict "name" "COORDINATOR_ADDRESS" "value" (printf "%s-worker-0" $t.job)) }}
{{- $fwEnv = append $fwEnv (dict "name" "NUM_PROCESSES" "value" (toString $t.total)) }}
{{- $fwEnv = append $fwEnv (dict "name" "PROCESS_ID" "value" (toString $i)) }}
