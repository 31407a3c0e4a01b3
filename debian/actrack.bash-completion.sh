# bash completion for actrack(1)                           -*- shell-script -*-
_actrack()
{
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--arena | --now) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	case $prev in
	--arena | --file)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	--directory | -D | --output)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return ;;
	esac
	local words
	case $cmd in
	'') words="dump ps monitor hangs top save stats collect deaths help --arena --help --version" ;;
	monitor) words="--json --journal --all-uids --recent --minidump-dir --count --timeout --help" ;;
	deaths) words="list info export --minidump --output --since --until --json --oom --killed-by --directory --file --help" ;;
	help) words="dump ps monitor hangs top save stats collect deaths" ;;
	*) words="--help" ;;
	esac
	mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -F _actrack actrack
