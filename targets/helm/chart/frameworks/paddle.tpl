{{- else if eq $fw "paddle" }}
{{- $ps := gt (int (get $t.counts "master" | default 0)) 0 }}
{{- $rendezvous := "worker" }}
{{- if $ps }}{{ $rendezvous = "master" }}{{ end }}
{{- $rendezvousPort := int (get $t.ports $rendezvous) }}
{{- $fwEnv = append $fwEnv (dict "name" "PYTHONUNBUFFERED" "value" "1") }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_JOB_ID" "value" $t.job) }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_NNODES" "value" (toString $t.total)) }}
{{- /* workload jobset: a rendezvous role of several replicas has one template, so each names itself by its
     JobSet host in POD_IP (launch's node address) and PADDLE_MASTER is replica 0's name, as the jobset target writes */}}
{{- if and (eq $role $rendezvous) (eq $count 1) }}
{{- $fwEnv = append $fwEnv (dict "name" "POD_IP_DUMMY" "valueFrom" (dict "fieldRef" (dict "fieldPath" "status.podIP"))) }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_MASTER" "value" (printf "$(POD_IP_DUMMY):%d" $rendezvousPort)) }}
{{- else }}
{{- if and (not $js) (eq $role $rendezvous) }}
{{- /* workload jobs: each replica's own Indexed Job host name (the k8s target's) */}}
{{- $fwEnv = append $fwEnv (dict "name" "POD_IP" "value" (printf "%s-$(TRAINSPEC_INDEX).%s" $workload $t.job)) }}
{{- else if and $js (eq $role $rendezvous) }}
{{- if hasKey $userNames "POD_IP" }}
{{- fail (printf "roles.%s.env: workload jobset: POD_IP is paddle.distributed.launch's node address, which workload jobset sets to each %s replica's JobSet host name so that %s 0 finds itself in PADDLE_MASTER (the jobset target refuses it too); expected no POD_IP in the rendezvous role's env; use workload jobs" $role $role $role) }}
{{- end }}
{{- $fwEnv = append $fwEnv (dict "name" "POD_IP" "value" (printf "%s-%s-0-$(TRAINSPEC_INDEX).%s" $t.job $role $t.job)) }}
{{- end }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_MASTER" "value" (printf "%s:%d" (first (get $t.names $rendezvous)) $rendezvousPort)) }}
{{- end }}
{{- if $ps }}
{{- if eq $role "master" }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_SERVER_NUM" "value" "1") }}
{{- else }}
{{- $fwEnv = append $fwEnv (dict "name" "PADDLE_TRAINER_NUM" "value" "1") }}
{{- end }}
{{- end }}
