{{- else if eq $fw "jax" }}
{{- $fwEnv = append $fwEnv (dict "name" "PYTHONUNBUFFERED" "value" "1") }}
{{- $fwEnv = append $fwEnv (dict "name" "COORDINATOR_PORT" "value" (toString (get $t.ports "worker"))) }}
{{- /* worker 0's host name (JobSet's with workload jobset); its process id through $(TRAINSPEC_INDEX) there */}}
{{- $fwEnv = append $fwEnv (dict "name" "COORDINATOR_ADDRESS" "value" (first (get $t.names "worker"))) }}
{{- $fwEnv = append $fwEnv (dict "name" "NUM_PROCESSES" "value" (toString $t.total)) }}
{{- $fwEnv = append $fwEnv (dict "name" "PROCESS_ID" "value" $indexRef) }}
