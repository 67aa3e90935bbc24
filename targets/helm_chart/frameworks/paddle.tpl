{{- else if eq $fw "paddle" }}
{{- $ps := gt (int (get $t.counts "master" | default 0)) 0 }}
{{- $rendezvous := "worker" }}
{{- if $ps }}{{ $rendezvous = "master" }}{{ end }}
{{- $rendezvousPort := int (get $t.ports $rendezvous) }}
{{- $fwEnv = append $fwEnv (dict "name" "PYTHONUNBUFFERED" "value" "1") }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_JOB_ID" "value" $t.job) }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_NNODES" "value" (toString $t.total)) }}
{{- if and (eq $role $rendezvous) (eq $i 0) }}
{{- $fwEnv = append $fwEnv (dict "name" "POD_IP_DUMMY" "valueFrom" (dict "fieldRef" (dict "fieldPath" "status.podIP"))) }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_MASTER" "value" (printf "$(POD_IP_DUMMY):%d" $rendezvousPort)) }}
{{- else }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_MASTER" "value" (printf "%s-%s-0:%d" $t.job $rendezvous $rendezvousPort)) }}
{{- end }}
{{- if $ps }}
{{- if eq $role "master" }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_SERVER_NUM" "value" "1") }}
{{- else }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_TRAINER_NUM" "value" "1") }}
{{- end }}
{{- end }}
