//! The data-driven table: command string -> every simple command (`[via] argv`, unknown words
//! prefixed with `?`) and the opaque reasons, in order.

use crate::render;

/// `(input, commands, opaque reasons)`.
pub(crate) type Row = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const ROWS: &[Row] = &[
    (r##"rm -rf /"##, &["rm -rf /"], &[]),
    (r##"\rm -rf /"##, &["rm -rf /"], &[]),
    (r##"'r'm -rf /"##, &["rm -rf /"], &[]),
    (r##""rm" -rf /"##, &["rm -rf /"], &[]),
    (r##"r\m -rf /"##, &["rm -rf /"], &[]),
    (r##"$'\x72m' -rf /"##, &["rm -rf /"], &[]),
    (r##"$'\162m' x"##, &["rm x"], &[]),
    (r##""$(echo rm)" -rf /"##, &["echo rm"], &["DynamicCommand"]),
    (r##"/usr/bin/rm -rf /"##, &["/usr/bin/rm -rf /"], &[]),
    (r##"./rm x"##, &["./rm x"], &[]),
    (r##"command rm x"##, &["[command] rm x"], &[]),
    (r##"command -p rm x"##, &["[command] rm x"], &[]),
    (r##"command -v rm"##, &["command -v rm"], &[]),
    (r##"builtin echo x"##, &["[builtin] echo x"], &[]),
    (r##"env -i rm x"##, &["[env] rm x"], &[]),
    (r##"env -u HOME rm x"##, &["[env] rm x"], &[]),
    (r##"env -C /tmp rm x"##, &["[env] rm x"], &["Unsupported"]),
    (r##"env --chdir=/ cat etc/shadow"##, &["[env] cat etc/shadow"], &["Unsupported"]),
    (r##"sudo -D / cat etc/shadow"##, &["sudo -D / cat etc/shadow", "[sudo] cat etc/shadow"], &["Unsupported"]),
    (r##"sudo -C 5 cat x"##, &["sudo -C 5 cat x", "[sudo] cat x"], &[]),
    (r##"env FOO=1 BAR=2 rm x"##, &["[env] rm x"], &[]),
    (r##"env -i FOO=1 -- rm x"##, &["[env] rm x"], &[]),
    (r##"env -S "rm -rf" x"##, &["[env -S] rm -rf x"], &[]),
    (r##"env"##, &["env"], &[]),
    (
        r##"sudo rm -rf /"##,
        &["sudo rm -rf /", "[sudo] rm -rf /"],
        &[],
    ),
    (
        r##"sudo -u root rm -rf /"##,
        &["sudo -u root rm -rf /", "[sudo] rm -rf /"],
        &[],
    ),
    (
        r##"sudo -uroot -E rm x"##,
        &["sudo -uroot -E rm x", "[sudo] rm x"],
        &[],
    ),
    (
        r##"sudo -g wheel -- rm x"##,
        &["sudo -g wheel -- rm x", "[sudo] rm x"],
        &[],
    ),
    (
        r##"sudo FOO=1 rm x"##,
        &["sudo FOO=1 rm x", "[sudo] rm x"],
        &[],
    ),
    (r##"sudo -i"##, &["sudo -i"], &["ShellFromStdin"]),
    (r##"sudo -s rm x"##, &["sudo -s rm x", "[sudo] rm x"], &[]),
    (
        r##"sudo --weird rm x"##,
        &["sudo --weird rm x"],
        &["Unsupported"],
    ),
    (
        r##"sudo $opt rm x"##,
        &["sudo ?$opt rm x"],
        &["DynamicCommand"],
    ),
    (r##"doas rm x"##, &["doas rm x", "[doas] rm x"], &[]),
    (
        r##"doas -u root rm x"##,
        &["doas -u root rm x", "[doas] rm x"],
        &[],
    ),
    (r##"pkexec rm x"##, &["pkexec rm x", "[pkexec] rm x"], &[]),
    (
        r##"chroot /mnt rm x"##,
        &["chroot /mnt rm x", "[chroot] rm x"],
        &[],
    ),
    (
        r##"su -c "rm x" root"##,
        &["su -c rm x root", "[su -c] rm x"],
        &[],
    ),
    (r##"su root"##, &["su root"], &["ShellFromStdin"]),
    (
        r##"runuser -u nobody rm x"##,
        &["runuser -u nobody rm x", "[runuser] rm x"],
        &[],
    ),
    (
        r##"runuser -l nobody -c 'rm x'"##,
        &["runuser -l nobody -c rm x", "[runuser -c] rm x"],
        &[],
    ),
    (r##"nice rm x"##, &["[nice] rm x"], &[]),
    (r##"nice -n 5 rm x"##, &["[nice] rm x"], &[]),
    (r##"nice -5 rm x"##, &["[nice] rm x"], &[]),
    (r##"nice --adjustment=5 rm x"##, &["[nice] rm x"], &[]),
    (r##"nohup rm x &"##, &["[nohup] rm x"], &[]),
    (r##"timeout 5 rm x"##, &["[timeout] rm x"], &[]),
    (r##"timeout -s KILL -k 2 5 rm x"##, &["[timeout] rm x"], &[]),
    (
        r##"timeout --signal=TERM 5s rm x"##,
        &["[timeout] rm x"],
        &[],
    ),
    (r##"time rm x"##, &["rm x"], &[]),
    (r##"/usr/bin/time -p rm x"##, &["[time] rm x"], &[]),
    (r##"stdbuf -oL -e0 rm x"##, &["[stdbuf] rm x"], &[]),
    (r##"exec rm x"##, &["[exec] rm x"], &[]),
    (r##"exec -a name rm x"##, &["[exec] rm x"], &[]),
    (r##"exec 3>out"##, &["exec"], &[]),
    (r##"xargs rm"##, &["[xargs] rm ?<xargs input>"], &[]),
    (
        r##"xargs -0 -n 1 -P 4 rm -f"##,
        &["[xargs] rm -f ?<xargs input>"],
        &[],
    ),
    (r##"xargs -I {} rm {}"##, &["[xargs] rm ?{}"], &[]),
    (r##"xargs"##, &["[xargs] echo ?<xargs input>"], &[]),
    (
        r##"ls | xargs -d '\n' rm"##,
        &["ls", "[xargs] rm ?<xargs input>"],
        &[],
    ),
    (
        r##"find . -exec rm {} \;"##,
        &["find . -exec rm {} ;", "[find -exec] rm ?{}"],
        &[],
    ),
    (
        r##"find . -name '*.tmp' -delete"##,
        &["find . -name *.tmp -delete"],
        &[],
    ),
    (
        r##"find . -type f -execdir rm -f {} +"##,
        &[
            "find . -type f -execdir rm -f {} +",
            "[find -execdir] rm -f ?{}",
        ],
        &[],
    ),
    (
        r##"find / -ok rm {} \; -exec chmod 777 {} \;"##,
        &[
            "find / -ok rm {} ; -exec chmod 777 {} ;",
            "[find -ok] rm ?{}",
            "[find -exec] chmod 777 ?{}",
        ],
        &[],
    ),
    (r##"flock /tmp/lock rm x"##, &["[flock] rm x"], &[]),
    // The lock file is opened (created) as `: > /tmp/lock` would open it.
    (r##"flock -c 'rm x' /tmp/lock"##, &[":", "[flock -c] rm x"], &[]),
    (r##"ionice -c 3 rm x"##, &["[ionice] rm x"], &[]),
    (r##"taskset 0x1 rm x"##, &["[taskset] rm x"], &[]),
    (r##"taskset -c 0 rm x"##, &["[taskset] rm x"], &[]),
    (r##"setsid rm x"##, &["[setsid] rm x"], &[]),
    (r##"unbuffer rm x"##, &["[unbuffer] rm x"], &[]),
    (r##"watch "rm x""##, &["watch rm x", "[watch] rm x"], &[]),
    (
        r##"watch -n 5 ls -la"##,
        &["watch -n 5 ls -la", "[watch] ls -la"],
        &[],
    ),
    (r##"strace -f -o log rm x"##, &["[strace] rm x"], &[]),
    (r##"ltrace rm x"##, &["[ltrace] rm x"], &[]),
    (r##"busybox rm -rf /"##, &["[busybox] rm -rf /"], &[]),
    (r##"busybox sh -c 'rm x'"##, &["[busybox,sh -c] rm x"], &[]),
    (
        r##"timeout 5 sudo -u x nice -n 1 env A=1 rm x"##,
        &[
            "[timeout] sudo -u x nice -n 1 env A=1 rm x",
            "[timeout,sudo,nice,env] rm x",
        ],
        &[],
    ),
    (r##"bash -c "rm -rf /""##, &["[bash -c] rm -rf /"], &[]),
    (r##"sh -c 'rm x'"##, &["[sh -c] rm x"], &[]),
    (r##"/bin/bash -c 'rm x'"##, &["[bash -c] rm x"], &[]),
    (r##"bash -lc 'rm x'"##, &["[bash -c] rm x"], &[]),
    (r##"bash -ec 'rm x'"##, &["[bash -c] rm x"], &[]),
    (r##"bash -xc 'rm x'"##, &["[bash -c] rm x"], &[]),
    (r##"bash -c -- 'rm x'"##, &["[bash -c] rm x"], &[]),
    (r##"bash -o errexit -c 'rm x'"##, &["[bash -c] rm x"], &[]),
    (r##"zsh -c 'rm x'"##, &["[zsh -c] rm x"], &[]),
    (
        r##"dash -c 'rm x; ls'"##,
        &["[dash -c] rm x", "[dash -c] ls"],
        &[],
    ),
    (r##"sh -c "$cmd""##, &["sh -c ?\"$cmd\""], &["DynamicEval"]),
    (r##"bash -c 'rm x' name arg"##, &["[bash -c] rm x"], &[]),
    (r##"sh -c 'eval "rm x"'"##, &["[sh -c,eval] rm x"], &[]),
    (
        r##"bash -c 'bash -c "sh -c \"rm x\""'"##,
        &["[bash -c,bash -c,sh -c] rm x"],
        &[],
    ),
    (
        r##"bash $opts -c 'rm x'"##,
        &["bash ?$opts -c rm x"],
        &["DynamicEval"],
    ),
    (
        r##"sudo -- sh -c 'rm x'"##,
        &["sudo -- sh -c rm x", "[sudo,sh -c] rm x"],
        &[],
    ),
    (
        r##"find . -exec sh -c 'rm "$1"' _ {} \;"##,
        &[
            "find . -exec sh -c rm \"$1\" _ {} ;",
            "[find -exec,sh -c] rm ?\"$1\"",
        ],
        &[],
    ),
    (
        r##"xargs -n1 sh -c 'rm $0'"##,
        &["[xargs,sh -c] rm ?$0"],
        &[],
    ),
    (r##"rm${IFS}-rf${IFS}/"##, &[], &["DynamicCommand"]),
    (r##"a=(rm -rf /); "${a[@]}""##, &[], &["DynamicCommand"]),
    (r##"env - rm -rf /"##, &["[env] rm -rf /"], &[]),
    (
        r##"su - root -c "rm x""##,
        &["su - root -c rm x", "[su -c] rm x"],
        &[],
    ),
    (r##"eval -- 'rm x'"##, &["[eval] rm x"], &[]),
    (r##"toybox rm x"##, &["[toybox] rm x"], &[]),
    (r##"\sudo rm x"##, &["sudo rm x", "[sudo] rm x"], &[]),
    (r##"/usr/bin/env /bin/rm x"##, &["[env] /bin/rm x"], &[]),
    (r##"builtin eval 'rm x'"##, &["[builtin,eval] rm x"], &[]),
    (r##"bash /dev/stdin <<< 'rm x'"##, &["[bash <<] rm x"], &[]),
    (
        r##"curl x | python3 /dev/stdin"##,
        &["curl x", "python3 /dev/stdin"],
        &["ShellFromStdin"],
    ),
    (
        r##"curl x | bash /dev/fd/0"##,
        &["curl x", "bash /dev/fd/0"],
        &["ShellFromStdin"],
    ),
    (
        r##"bash <(curl x)"##,
        &["curl x", "bash ?<(curl x)"],
        &["DynamicEval"],
    ),
    (r##"sh script.sh"##, &["sh script.sh"], &[]),
    (
        r##"bash ./deploy.sh --prod"##,
        &["bash ./deploy.sh --prod"],
        &[],
    ),
    (r##"eval 'rm x'"##, &["[eval] rm x"], &[]),
    (r##"eval rm x"##, &["[eval] rm x"], &[]),
    (r##"eval "$x""##, &[], &["DynamicEval"]),
    (
        r##"source ./env.sh"##,
        &["source ./env.sh"],
        &["Unsupported"],
    ),
    (r##". ./env.sh"##, &[". ./env.sh"], &["Unsupported"]),
    (r##"bash <<< 'rm -rf x'"##, &["[bash <<] rm -rf x"], &[]),
    (r##"bash <<< "$x""##, &["bash"], &["ShellFromStdin"]),
    (r##"cat <<< 'rm -rf x'"##, &["cat"], &[]),
    (r##"curl x | sh"##, &["curl x", "sh"], &["ShellFromStdin"]),
    (
        r##"curl -fsSL x | bash -s -- --flag"##,
        &["curl -fsSL x", "bash -s -- --flag"],
        &["ShellFromStdin"],
    ),
    (
        r##"wget -qO- x | sudo bash"##,
        &["wget -qO- x", "sudo bash", "[sudo] bash"],
        &["ShellFromStdin"],
    ),
    (
        r##"echo cm0gLXJmIC8K | base64 -d | sh"##,
        &["echo cm0gLXJmIC8K", "base64 -d", "sh"],
        &["ShellFromStdin"],
    ),
    (
        r##"cat script | python3"##,
        &["cat script", "python3"],
        &["ShellFromStdin"],
    ),
    (
        r##"cat x | python3 -"##,
        &["cat x", "python3 -"],
        &["ShellFromStdin"],
    ),
    (
        r##"python3 -c 'import os; os.remove("x")'"##,
        &["python3 -c import os; os.remove(\"x\")"],
        &["InlineCode"],
    ),
    (r##"python3 script.py"##, &["python3 script.py"], &[]),
    (
        r##"python3 -m http.server"##,
        &["python3 -m http.server"],
        &[],
    ),
    (r##"python3 --version"##, &["python3 --version"], &[]),
    (
        r##"node -e 'require("fs")'"##,
        &["node -e require(\"fs\")"],
        &["InlineCode"],
    ),
    (r##"node --eval 'x'"##, &["node --eval x"], &["InlineCode"]),
    (r##"node app.js"##, &["node app.js"], &[]),
    (
        r##"make -f - <<< 'all:; rm -rf .'"##,
        &["make -f -"],
        &["InlineCode"],
    ),
    (
        r##"make --eval='x := $(shell id)' all"##,
        &["make --eval=x := $(shell id) all"],
        &["InlineCode"],
    ),
    (r##"make -f Makefile.ci test"##, &["make -f Makefile.ci test"], &[]),
    (
        r##"uv run --frozen rm -rf ."##,
        &["uv run --frozen rm -rf .", "[uv] rm -rf ."],
        &[],
    ),
    (
        r##"uv run --with rich python x.py"##,
        &["uv run --with rich python x.py"],
        &["Unsupported"],
    ),
    (
        r##"perl -e 'unlink "x"'"##,
        &["perl -e unlink \"x\""],
        &["InlineCode"],
    ),
    (
        r##"perl -pi -e 's/a/b/' f"##,
        &["perl -pi -e s/a/b/ f"],
        &["InlineCode"],
    ),
    (r##"ruby -e 'x'"##, &["ruby -e x"], &["InlineCode"]),
    (r##"php -r 'x'"##, &["php -r x"], &["InlineCode"]),
    (r##"deno eval 'x'"##, &["deno eval x"], &["InlineCode"]),
    (
        r##"osascript -e 'x'"##,
        &["osascript -e x"],
        &["InlineCode"],
    ),
    (r##"awk '{print $1}' f"##, &["awk {print $1} f"], &[]),
    (
        r##"awk '{system("rm x")}' f"##,
        &["awk {system(\"rm x\")} f"],
        &["InlineCode"],
    ),
    (
        r##"awk -F: '{print $1 > "out"}' f"##,
        &["awk -F: {print $1 > \"out\"} f"],
        &["InlineCode"],
    ),
    (r##"awk -f prog.awk f"##, &["awk -f prog.awk f"], &[]),
    (r##"sed 's/a/b/' f"##, &["sed s/a/b/ f"], &[]),
    (r##"sed -i 's/a/b/g' f"##, &["sed -i s/a/b/g f"], &[]),
    (r##"sed 's/a/b/e' f"##, &["sed s/a/b/e f"], &["InlineCode"]),
    (
        r##"sed -e '1d' -e 'w out' f"##,
        &["sed -e 1d -e w out f"],
        &["InlineCode"],
    ),
    (r##"sed -n '/x/p' f"##, &["sed -n /x/p f"], &[]),
    (r##"echo $(rm x)"##, &["rm x", "echo ?$(rm x)"], &[]),
    (r##"echo `rm x`"##, &["rm x", "echo ?`rm x`"], &[]),
    (r##"echo "$(rm x)""##, &["rm x", "echo ?\"$(rm x)\""], &[]),
    (
        r##"echo "a $(rm x) b""##,
        &["rm x", "echo ?\"a $(rm x) b\""],
        &[],
    ),
    (
        r##"echo ${x:-$(rm x)}"##,
        &["rm x", "echo ?${x:-$(rm x)}"],
        &[],
    ),
    (
        r##"echo $(( $(rm x) + 1 ))"##,
        &["rm x", "echo ?$(( $(rm x) + 1 ))"],
        &[],
    ),
    (
        r##"echo $(echo $(rm x))"##,
        &["rm x", "echo ?$(rm x)", "echo ?$(echo $(rm x))"],
        &[],
    ),
    (r##"x=$(rm y)"##, &["rm y"], &[]),
    (r##"FOO=$(rm y) ls"##, &["rm y", "ls"], &[]),
    (r##"cat <(rm x)"##, &["rm x", "cat ?<(rm x)"], &[]),
    (
        r##"diff <(ls a) <(ls b)"##,
        &["ls a", "ls b", "diff ?<(ls a) ?<(ls b)"],
        &[],
    ),
    (r##"tee >(rm x)"##, &["rm x", "tee ?>(rm x)"], &[]),
    (r##"cat < <(rm x)"##, &["rm x", "cat"], &[]),
    (r##"{ rm x; }"##, &["rm x"], &[]),
    (r##"(rm x)"##, &["rm x"], &[]),
    (r##"{ rm x; } > out"##, &["rm x"], &[]),
    (r##"( cd /tmp && rm x )"##, &["cd /tmp", "rm x"], &[]),
    (r##"a && rm x || b"##, &["a", "rm x", "b"], &[]),
    (r##"a; rm x; b"##, &["a", "rm x", "b"], &[]),
    (r##"a & rm x"##, &["a", "rm x"], &[]),
    (r##"a | rm x | b"##, &["a", "rm x", "b"], &[]),
    (r##"a |& rm x"##, &["a", "rm x"], &[]),
    (r##"! rm x"##, &["rm x"], &[]),
    (r##"if rm x; then ls; fi"##, &["rm x", "ls"], &[]),
    (
        r##"if a; then b; elif c; then d; else e; fi"##,
        &["a", "b", "c", "d", "e"],
        &[],
    ),
    (r##"while rm x; do ls; done"##, &["rm x", "ls"], &[]),
    (r##"until a; do b; done"##, &["a", "b"], &[]),
    (
        r##"for f in $(ls); do rm "$f"; done"##,
        &["ls", "rm ?\"$f\""],
        &[],
    ),
    (r##"for ((i=0; i<3; i++)); do rm x; done"##, &["rm x"], &[]),
    (
        r##"case $x in a) rm y;; *) ls;; esac"##,
        &["rm y", "ls"],
        &[],
    ),
    (r##"[[ -f $(rm x) ]]"##, &["rm x"], &[]),
    (r##"(( x = $(rm y) ))"##, &["rm y"], &[]),
    (r##"f() { rm x; }; f"##, &["[function f] rm x"], &[]),
    (r##"f() { rm x; }"##, &[], &[]),
    (
        r##"function g { rm x; }; g a b"##,
        &["[function g] rm x"],
        &[],
    ),
    (r##"f() { f; }; f"##, &[], &["FunctionCall"]),
    (
        r##"rm() { echo hi; }; rm x"##,
        &["[function rm] echo hi"],
        &[],
    ),
    // A variable assigned in the string stands for its values (see `vars.rs`); where the
    // assignment may not happen, for whatever it held before too.
    (r##"x=rm; $x -rf /"##, &["rm -rf /"], &[]),
    (r##"if true; then x=rm; fi; $x -rf /"##, &["true", "rm -rf /"], &["DynamicCommand"]),
    (r##"(x=rm); $x -rf /"##, &["rm -rf /"], &["DynamicCommand"]),
    (r##"true && x=rm; $x -rf /"##, &["true", "rm -rf /"], &["DynamicCommand"]),
    (r##"f=~/.ssh/id_rsa; cat $f"##, &["cat ~/.ssh/id_rsa"], &[]),
    (r##"x=.env; cat "$x""##, &["cat .env"], &[]),
    (r##"x=.en; cat ${x}v"##, &["cat .env"], &[]),
    (r##"f=a; f=.env; cat $f"##, &["cat a", "cat .env"], &[]),
    (r##"for f in .env a; do cat $f; done"##, &["cat .env", "cat a"], &[]),
    (r##"for f in src/*.rs; do wc -l "$f"; done"##, &["wc -l ?src/*.rs"], &[]),
    (r##"cat ${x:-.env}"##, &["cat .env", "cat ?${x:-.env}"], &[]),
    (r##"f=.git/config; cp evil.cfg "$f""##, &["cp evil.cfg .git/config"], &[]),
    (r##"f=$(pwd); cat $f"##, &["pwd", "cat ?$f"], &[]),
    (r##"$x"##, &[], &["DynamicCommand"]),
    (r##"${cmd} arg"##, &[], &["DynamicCommand"]),
    (r##"$(echo rm) -rf /"##, &["echo rm"], &["DynamicCommand"]),
    (r##"`echo rm` -rf /"##, &["echo rm"], &["DynamicCommand"]),
    (r##"/bin/r* x"##, &[], &["DynamicCommand"]),
    (r##"r? x"##, &[], &["DynamicCommand"]),
    (r##"{rm,-rf,x}"##, &["rm -rf x"], &[]),
    (r##"{rm,-rf,.}"##, &["rm -rf ."], &[]),
    (r##"ls *.rs"##, &["ls ?*.rs"], &[]),
    (r##"git {push,origin}"##, &["git push origin"], &[]),
    (r##"git {push,x}"##, &["git push x"], &[]),
    (r##"cp f{,.bak}"##, &["cp f f.bak"], &[]),
    (r##"echo {a,{b,c}}d"##, &["echo ad bd cd"], &[]),
    (r##"echo {1..3} {a..c} {01..03}"##, &["echo 1 2 3 a b c 01 02 03"], &[]),
    (r##"echo {} {x} {a,b"##, &["echo {} {x} {a,b"], &[]),
    (r##"echo "{a,b}" '{a,b}' \{a,b\}"##, &["echo {a,b} {a,b} {a,b}"], &[]),
    (r##"echo ${x} {a,$x}"##, &["echo ?${x} ?{a,$x}"], &[]),
    (r##"echo {a,b}*"##, &["echo ?{a,b}*"], &[]),
    (r##"echo {1..1000}"##, &["echo ?{1..1000}"], &[]),
    (r##"{r,}m x"##, &["rm m x"], &[]),
    (r##"> {a,b}"##, &[":"], &[]),
    (r##"git push"##, &["git push"], &[]),
    (r##"git status -s"##, &["git status -s"], &[]),
    (
        r##"git -c core.pager=cat log"##,
        &["git -c core.pager=cat log"],
        &[],
    ),
    (
        r##"cargo test && git push"##,
        &["cargo test", "git push"],
        &[],
    ),
    (r##"FOO=1 rm x"##, &["rm x"], &[]),
    (r##"A=1 B=2 cmd arg"##, &["cmd arg"], &[]),
    (r##"x=1"##, &[], &[]),
    (r##"echo hi > out.txt"##, &["echo hi"], &[]),
    (r##"echo hi >> log"##, &["echo hi"], &[]),
    (r##"cat < in"##, &["cat"], &[]),
    (r##"ls &> all"##, &["ls"], &[]),
    (r##"ls 2> err"##, &["ls"], &[]),
    (r##"ls > /dev/null 2>&1"##, &["ls"], &[]),
    (r##"ls >&2"##, &["ls"], &[]),
    (r##"ls 2>/dev/stderr"##, &["ls"], &[]),
    (
        r##"cat <<EOF
hello
EOF"##,
        &["cat"],
        &[],
    ),
    (
        r##"sh <<EOF
rm -rf x
EOF"##,
        &["[sh <<] rm -rf x"],
        &[],
    ),
    (
        r##"bash <<'EOF'
rm $x
EOF"##,
        &["[bash <<] rm ?$x"],
        &[],
    ),
    (
        r##"sh <<EOF
rm $x
EOF"##,
        &["sh"],
        &["ShellFromStdin"],
    ),
    (
        r##"cat <<EOF
$(rm x)
EOF"##,
        &["rm x", "cat"],
        &[],
    ),
    (
        r##"sh <<-EOF
	rm x
	EOF"##,
        &["[sh <<] rm x"],
        &[],
    ),
    // Red team: an unquoted here-document is fed after the shell's backslash processing, so
    // `\`` and `\$` are substitutions for the `sh` that reads it; `\"` and quotes stay.
    (
        "sh <<EOF\necho \\`rm -rf .\\`\nEOF",
        &["[sh <<] rm -rf .", "[sh <<] echo ?`rm -rf .`"],
        &[],
    ),
    (
        "bash <<EOF\necho \"\\$(git push -f origin main)\"\nEOF",
        &["[bash <<] git push -f origin main", "[bash <<] echo ?\"$(git push -f origin main)\""],
        &[],
    ),
    (
        "sh <<EOF\necho \\\"; rm -rf . #\\\" 'a b' \\\\x\nEOF",
        &["[sh <<] echo \"", "[sh <<] rm -rf ."],
        &[],
    ),
    (
        "sh <<'EOF'\necho \\`rm -rf .\\`\nEOF",
        &["[sh <<] echo `rm -rf .`"],
        &[],
    ),
    (
        r##"python3 <<EOF
print(1)
EOF"##,
        &["python3"],
        &["ShellFromStdin"],
    ),
    (r##"coproc rm x"##, &["rm x"], &["Unsupported"]),
    (
        r##"trap 'rm x' EXIT"##,
        &["trap rm x EXIT", "[trap] rm x"],
        &[],
    ),
    (
        r##"trap 'rm -rf .' EXIT"##,
        &["trap rm -rf . EXIT", "[trap] rm -rf ."],
        &[],
    ),
    (
        r##"trap -- "rm x" INT TERM"##,
        &["trap -- rm x INT TERM", "[trap] rm x"],
        &[],
    ),
    (r##"trap - EXIT"##, &["trap - EXIT"], &[]),
    (r##"trap '' INT"##, &["trap  INT"], &[]),
    (r##"trap -p"##, &["trap -p"], &[]),
    (r##"trap EXIT"##, &["trap EXIT"], &[]),
    (
        r##"trap "$x" EXIT"##,
        &["trap ?\"$x\" EXIT"],
        &["DynamicEval"],
    ),
    (r##"trap $x"##, &["trap ?$x"], &["DynamicEval"]),
    (
        r##"alias ll='rm -rf /'"##,
        &["alias ll=rm -rf /", "[alias] rm -rf /"],
        &[],
    ),
    (r##"alias ll"##, &["alias ll"], &[]),
    (r##"alias a="$x""##, &["alias ?a=\"$x\""], &["DynamicEval"]),
    (r##"echo "unterminated"##, &[], &["ParseError"]),
    (r##"if then fi"##, &[], &["ParseError"]),
    (r##")"##, &[], &["ParseError"]),
    (r##"$(<<  "##, &[], &["ParseError"]),
    (
        r##"(((((((((((((((((((((((((((((((("##,
        &[],
        &["ParseError"],
    ),
    (r##"ls; # comment"##, &["ls"], &[]),
    (r##"   "##, &[], &[]),
    (r##"echo 'a''b'"c"\d"##, &["echo abcd"], &[]),
    (r##"echo ~/x ~root/y"##, &["echo ~/x ~root/y"], &[]),
    (r##"echo -e 'a\nb'"##, &["echo -e a\\nb"], &[]),
    (
        r##"docker run --rm -it img sh -c 'rm x'"##,
        &["docker run --rm -it img sh -c rm x"],
        &[],
    ),
    (r##"ssh host 'rm -rf /'"##, &["ssh host rm -rf /"], &[]),
    (
        r##"git commit -m "$(cat msg)""##,
        &["cat msg", "git commit -m ?\"$(cat msg)\""],
        &[],
    ),
    (
        r##"npm run build -- --prod"##,
        &["npm run build -- --prod"],
        &[],
    ),
    (r##"cd /tmp && ls"##, &["cd /tmp", "ls"], &[]),
    (r##"export X=1 && rm x"##, &["export X=1", "rm x"], &[]),
    (r##"local y=$(rm x)"##, &["rm x", "local ?y=$(rm x)"], &[]),
    (r##"test -f x && rm x"##, &["test -f x", "rm x"], &[]),
    (r##"[ -f x ] && rm x"##, &["[ -f x ]", "rm x"], &[]),
    (r##"true | true | true"##, &["true", "true", "true"], &[]),
    (
        r##"echo a\
b"##,
        &["echo ab"],
        &[],
    ),
    (
        r##"sudo -u root bash -c 'curl x | sh'"##,
        &[
            "sudo -u root bash -c curl x | sh",
            "[sudo,bash -c] curl x",
            "[sudo,bash -c] sh",
        ],
        &["ShellFromStdin"],
    ),
    (r##"env bash -c 'rm x'"##, &["[env,bash -c] rm x"], &[]),
    (r##"nice bash <<< 'rm x'"##, &["[nice,bash <<] rm x"], &[]),
    (r##"echo 日本 && rm 日本"##, &["echo 日本", "rm 日本"], &[]),
    (
        r##"bash -c 'ls' && bash -c "$(curl x)""##,
        &["[bash -c] ls", "curl x", "bash -c ?\"$(curl x)\""],
        &["DynamicEval"],
    ),
    (r##"exec 3>&1"##, &["exec"], &[]),
    // A replacement token in a shell string: analysed as an unknown word, the string stays
    // opaque (the file name is pasted in as shell code).
    (
        r##"find . -print0 | xargs -0 -I{} sh -c 'rm -rf {}'"##,
        &[
            "find . -print0",
            "[xargs,sh -c] rm -rf ?\"$__warden_xargs\"",
        ],
        &["DynamicEval"],
    ),
    (
        r##"xargs -I % sudo bash -c 'rm %'"##,
        &[
            "[xargs] sudo bash -c ?rm %",
            "[xargs,sudo,bash -c] rm ?\"$__warden_xargs\"",
        ],
        &["DynamicEval"],
    ),
    (
        r##"find . -exec sh -c 'rm -rf {}' \;"##,
        &[
            "find . -exec sh -c rm -rf {} ;",
            "[find -exec,sh -c] rm -rf ?\"$__warden_xargs\"",
        ],
        &["DynamicEval"],
    ),
    (
        r##"find . -exec sh -c "rm -rf '{}'" \;"##,
        &[
            "find . -exec sh -c rm -rf '{}' ;",
            "[find -exec,sh -c] rm -rf ?\"$__warden_xargs\"",
        ],
        &["DynamicEval"],
    ),
    (
        r##"find . -exec sh -c "'{}' x; ls" \;"##,
        &["find . -exec sh -c '{}' x; ls ;", "[find -exec,sh -c] ls"],
        &["DynamicEval", "DynamicCommand"],
    ),
    (
        r##"xargs -I{} sh -c "rm $x {}""##,
        &["[xargs] sh -c ?\"rm $x {}\""],
        &["DynamicEval"],
    ),
    (r##">out"##, &[":"], &[]),
    (r##"> /dev/sda"##, &[":"], &[]),
    (r##"< f"##, &[":"], &[]),
    (r##">> f; 2> g; &> h"##, &[":", ":", ":"], &[]),
    (r##"> f | cat"##, &[":", "cat"], &[]),
    (r##"sh -c '> /dev/sda'"##, &["[sh -c] :"], &[]),
    (r##">/dev/null"##, &[], &[]),
    // Substitutions in every word-like text brush returns raw.
    (r##"a[$(rm -rf .)]=1"##, &["rm -rf ."], &[]),
    (r##"a[`rm x`]+=1 ls"##, &["rm x", "ls"], &[]),
    (
        r##"declare a[$(rm x)]=1"##,
        &["rm x", "declare ?a[$(rm x)]=1"],
        &[],
    ),
    (r##"echo ${a[$(rm x)]}"##, &["rm x", "echo ?${a[$(rm x)]}"], &[]),
    (r##"(( a[$(rm x)] ))"##, &["rm x"], &[]),
    (
        r##"echo $(( a[`rm x`] ))"##,
        &["rm x", "echo ?$(( a[`rm x`] ))"],
        &[],
    ),
    (r##"a=([$(rm x)]=1)"##, &["rm x"], &[]),
    (r##"[[ $(rm x) == a ]]"##, &["rm x"], &[]),
    (r##"case x in $(rm y)) ;; esac"##, &["rm y"], &[]),
    (r##"for i in a $(rm x); do :; done"##, &["rm x", ":"], &[]),
    (r##"cat > $(rm x)"##, &["rm x", "cat"], &[]),
    (
        r##"cat <<EOF
$(rm x)
EOF"##,
        &["rm x", "cat"],
        &[],
    ),
    (r##"git log --format='<<%h>>'"##, &[], &["ParseError"]),
];

#[test]
fn table_has_enough_rows() {
    assert!(ROWS.len() >= 150, "{} rows", ROWS.len());
}

#[test]
fn every_row_matches() {
    check(ROWS);
}

/// Every row's commands and opaque reasons are what the analyser gives.
pub(crate) fn check(rows: &[Row]) {
    let mut failures = vec![];
    for (input, commands, opaque) in rows {
        let a = warden_shell::analyse(input);
        let got: Vec<String> = a.commands.iter().map(render).collect();
        let got_opaque: Vec<String> = a.opaque.iter().map(|o| format!("{:?}", o.reason)).collect();
        if got != *commands || got_opaque != *opaque {
            failures.push(format!(
                "{input:?}\n   want {commands:?} {opaque:?}\n   got  {got:?} {got_opaque:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
