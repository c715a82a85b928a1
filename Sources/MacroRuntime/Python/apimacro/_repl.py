"""``apimacro repl``: CPython's own interactive console with apimacro loaded.

The host calls ``main(native, history, interactive)`` on the main thread.
``native`` is the ``_apimacro_repl`` module: the ``:`` commands that need the
host (``run``, ``login``, ``verbose``, ``macros``).  Everything else is
``code.InteractiveConsole``: an exception prints its traceback and the session
goes on with its variables; Ctrl-C raises ``KeyboardInterrupt`` in whatever
runs (the host cancels in-flight requests) and returns to the prompt.

On a terminal, ``readline`` gives line editing, history kept in ``history``
(mode 0600: lines may hold tokens) and tab completion of Python names and
client methods (``rlcompleter``), plus ``:`` commands and macro names.  When
stdin is not a terminal, lines are read from it with no prompt or banner, so
``apimacro repl < session.txt`` runs as a script.
"""

import builtins
import code
import os
import shlex
import sys

import _apimacro

from ._stdout import CLOSED_OUTPUT_STATUS, closed_stdout, flush_stdout
from ._tracebacks import hide_internal

# The clients with a login, built-in and plugins (the names `apimacro login` takes), and how each
# logs in ("oauth2_implicit", "oauth2_code", "oauth2_device" or "key"), as the host lists them.
LOGINS = dict(_apimacro._logins)

COMMANDS = {
    "run": ":run [OPTIONS] MACRO [ARGS]   run a macro in a fresh namespace (its sys.exit does not leave the REPL);"
           " with run's options (--replay FILE, --offline, ...) as `apimacro run` does, in a process of its own",
    "macros": ":macros              list the macros on the macro path",
    "plugins": ":plugins             list the loaded plugins and their clients",
    "login": ":login NAME          log in to " + ", ".join(LOGINS) + " (as apimacro login)",
    "format": ":format table|json|csv|ndjson   how apimacro.output prints from now on",
    "verbose": ":verbose on|off      one line per HTTP exchange on stderr",
    "reload": ":reload              re-import the modules imported from this folder or a macro folder"
              " that changed since (names taken with `from m import f` keep the old object)",
    "help": ":help                this list",
    "quit": ":quit                leave (Ctrl-D too)",
}
FORMATS = ("table", "json", "csv", "ndjson")
HISTORY_LENGTH = 1000


def _plugins():
    """The ``apimacro.plugins`` mapping, or None when plugins are not available."""
    import apimacro

    try:
        plugins = getattr(apimacro, "plugins")
    except Exception:
        return None
    return plugins if hasattr(plugins, "items") else None


def _clients():
    """The names of the built-in clients' objects (github, instagram, shortener), as the host lists them."""
    import apimacro

    return [name for name in _apimacro._builtin_clients if getattr(apimacro, name, None) is not None]


def namespace():
    """The console's globals: apimacro, the built-in clients and each plugin's client."""
    import apimacro

    names = {"__name__": "__console__", "__doc__": None, "__builtins__": builtins, "apimacro": apimacro}
    for name in _clients():
        names[name] = getattr(apimacro, name)
    for name, client in (_plugins() or {}).items():
        names.setdefault(name, client)
    return names


class Console(code.InteractiveConsole):
    """An InteractiveConsole whose lines starting with ``:`` are apimacro commands."""

    def __init__(self, native, interactive, names=None):
        super().__init__(names if names is not None else namespace(), filename="<repl>")
        self.native = native
        self.interactive = interactive
        self.failed = False
        self.quitting = False
        # stdout's reader went away (`apimacro repl < s.txt | head`): the session ends quietly.
        self.output_closed = False
        # Fed from a file or pipe: the input's line on which the statement being read began, so
        # a traceback names the file's line, not line 1 of each statement.
        self.first_line = 1
        # The modules imported from the working directory and the macro folders, for :reload.
        self.reloader = None

    # -- input -------------------------------------------------------------------------

    def raw_input(self, prompt=""):
        if self.quitting:
            raise EOFError
        return input(prompt)

    def runsource(self, source, filename="<input>", symbol="single"):
        if not self.interactive and self.first_line > 1:
            # Blank lines before it: compiled where it stands in the input.
            source = "\n" * (self.first_line - 1) + source
        return super().runsource(source, filename, symbol)

    def push(self, line):
        if not self.buffer and line.lstrip().startswith(":"):
            self.command(line.strip()[1:])
            self.note_imports()
            return False
        more = super().push(line)
        if not more:
            self.note_imports()
        return more

    def note_imports(self):
        """Records when each module from the session's folders was imported (for :reload)."""
        try:
            if self.reloader is None:
                from ._debugging import Reloader

                folders = {os.getcwd()} | {os.path.dirname(path) for _, _, path in self.native.macros()}
                self.reloader = Reloader(sorted(folders))
            self.reloader.note()
        except Exception:  # never in the way of the session
            pass

    # -- errors: remember them, so a script on stdin can exit 1 ------------------------

    def write(self, data):
        """Tracebacks and syntax errors, with every secret known to apimacro redacted."""
        sys.stderr.write(self.native.redact(data))

    def showtraceback(self):
        if closed_stdout(sys.exc_info()[1]):
            self.end_quietly()
            return
        self.failed = True
        hide_internal(sys.exc_info()[1])
        super().showtraceback()

    def end_quietly(self):
        """Ends the session because stdout's reader has gone: no traceback, status 141."""
        self.output_closed = True
        self.quitting = True

    def showsyntaxerror(self, filename=None):
        self.failed = True
        super().showsyntaxerror(filename)

    # -- the : commands ----------------------------------------------------------------

    def command(self, text):
        try:
            words = shlex.split(text)
        except ValueError as error:
            self.complain(f"cannot read that command: {error}")
            return
        if not words:
            self.complain("a command name goes after ':' (see :help)")
            return
        name, args = words[0], words[1:]
        handler = getattr(self, "do_" + name, None)
        if name not in COMMANDS or handler is None:
            self.complain(f"no command ':{name}' (see :help)")
            return
        try:
            handler(args)
        except KeyboardInterrupt:
            self.write("\nKeyboardInterrupt\n")
        except Exception as error:  # a command's failure is one line, not a traceback
            if closed_stdout(error):
                self.end_quietly()
            else:
                self.complain(str(error))

    def complain(self, message):
        self.failed = True
        self.write(f"apimacro: {message}\n")

    def do_help(self, args):
        print(f"Python with apimacro loaded: {', '.join(_clients())}, apimacro and the plugins' clients.")
        for line in COMMANDS.values():
            print("  " + line)

    def do_quit(self, args):
        self.quitting = True

    def do_run(self, args):
        if not args:
            raise ValueError("usage: :run [OPTIONS] MACRO [ARGS]")
        child = self.native.child_run(args, _apimacro.default_format)
        if child is not None:
            argv, name = child
            status = _run_child(argv, forward_interrupt=not self.interactive)
            if status:
                self.failed = True
                self.write(f"[{name} exited {status}]\n")
            return
        saved_argv, saved_path = list(sys.argv), list(sys.path)
        saved_main = sys.modules.get("__main__")
        try:
            status = self.native.run(args[0], args[1:])
        finally:
            sys.argv[:] = saved_argv
            sys.path[:] = saved_path
            if saved_main is not None:
                sys.modules["__main__"] = saved_main
        if status == CLOSED_OUTPUT_STATUS and closed_stdout():
            self.end_quietly()
        elif status:
            self.failed = True
            self.write(f"[{args[0]} exited {status}]\n")

    def do_reload(self, args):
        if args:
            raise ValueError("usage: :reload (it re-imports every changed module)")
        self.note_imports()
        if self.reloader is None:
            raise ValueError("cannot tell which modules were imported")
        try:
            reloaded, gone = self.reloader.reload()
        except Exception:
            self.showtraceback()
            return
        if gone:
            self.complain(f"cannot reload {', '.join(gone)}: the file is gone")
        print(f"reloaded {', '.join(reloaded)}" if reloaded else "nothing changed since the modules were imported")

    def do_macros(self, args):
        entries = self.native.macros()
        if not entries:
            print("No macros found on the macro path.")
            return
        width = max(len(name) for name, _, _ in entries)
        for name, help_text, path in entries:
            print(f"{name.ljust(width)}  {help_text}  [{path}]")

    def do_plugins(self, args):
        plugins = _plugins()
        if not plugins:
            print("No plugins are loaded.")
            return
        # One width for the names, so the descriptions line up (as `plugins list` and `:macros`).
        width = max(len(name) for name in plugins)
        for name, client in sorted(plugins.items()):
            doc = (getattr(client, "__doc__", None) or "").strip().splitlines()
            print(f"{name.ljust(width)}  {doc[0] if doc else ''}".rstrip())

    def do_login(self, args):
        if len(args) != 1:
            raise ValueError(f"usage: :login NAME ({', '.join(LOGINS)})")
        kind = LOGINS.get(args[0])
        if kind is None:
            raise ValueError(f"no login for '{args[0]}': :login takes {', '.join(LOGINS)}, as apimacro login does")
        import apimacro

        client = getattr(apimacro, args[0], None)
        if kind == "oauth2_device":
            # The device flow prints its one-time code and waits for it, as apimacro login does.
            self.native.login(args[0], "")
            print("(new sessions and batch runs use it)")
            return
        if kind in ("oauth2_implicit", "oauth2_code"):
            # A built-in client logs in in-process, so the session's client uses the token at once;
            # a plugin's login keeps its state as `apimacro login NAME` does.
            builtin = hasattr(client, "complete_login")
            print("Open this URL in a browser and allow access:")
            print(client.authorize_url() if builtin else self.native.login_url(args[0]))
            raw = input("Then paste the address your browser was sent to: ")
            # It carries the access token: it must not reach the history file.
            _forget_last_input(raw)
            redirect = raw.strip()
            if not redirect:
                print("No address given; nothing stored.")
                return
            if builtin:
                client.complete_login(redirect)
                print(f"{args[0]}: logged in; the token is stored under $APIMACRO_HOME (mode 0600).")
            else:
                self.native.login(args[0], redirect, True)
                print("(new sessions and batch runs use it)")
            return
        import getpass

        prompt = f"Paste the key for {args[0]} (not echoed; stored under $APIMACRO_HOME, mode 0600): "
        key = getpass.getpass(prompt) if self.interactive else input()
        self.native.login(args[0], key)
        print("(new sessions and batch runs use it)")

    def do_format(self, args):
        import _apimacro

        if len(args) != 1 or args[0] not in FORMATS:
            raise ValueError("usage: :format " + "|".join(FORMATS))
        _apimacro.default_format = args[0]
        print(f"apimacro.output prints {args[0]} from now on.")

    def do_verbose(self, args):
        if len(args) != 1 or args[0] not in ("on", "off"):
            raise ValueError("usage: :verbose on|off")
        self.native.verbose(args[0] == "on")
        print(f"verbose {args[0]}.")


class Completer:
    """rlcompleter for Python, plus ``:`` commands, formats and macro names."""

    def __init__(self, console):
        import rlcompleter

        self.console = console
        self.python = rlcompleter.Completer(console.locals)
        self.matches = []

    def complete(self, text, state):
        import readline

        line = readline.get_line_buffer()
        if not line.lstrip().startswith(":") or self.console.buffer:
            return self.python.complete(text, state)
        if state == 0:
            self.matches = self.command_matches(line.lstrip()[1:], text)
        return self.matches[state] if state < len(self.matches) else None

    def command_matches(self, line, text):
        words = line.split()
        if len(words) <= 1 and not line.endswith(" "):
            prefix = ":" if text.startswith(":") else ""
            stem = text[len(prefix):]
            return [prefix + name + " " for name in COMMANDS if name.startswith(stem)]
        choices = {"format": FORMATS, "verbose": ("on", "off"), "login": tuple(LOGINS)}.get(words[0], ())
        if words[0] == "run":
            try:
                choices = [name for name, _, _ in self.console.native.macros()]
            except Exception:
                choices = ()
        return [choice + " " for choice in choices if choice.startswith(text)]


def _setup_readline(console, history):
    """Line editing, completion and history; False when readline is missing."""
    try:
        import readline
    except ImportError:
        return False
    readline.set_completer(Completer(console).complete)
    readline.set_completer_delims(" \t\n`~!@#$%^&*()-=+[{]}\\|;'\",<>/?")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    readline.set_history_length(HISTORY_LENGTH)
    if history and os.path.exists(history):
        try:
            readline.read_history_file(history)
        except OSError as error:
            console.write(f"apimacro: cannot read the history {history}: {error}\n")
    return True


def _run_child(argv, forward_interrupt):
    """Runs ``argv`` (``apimacro run ...``) with the REPL's streams and waits for it; returns its
    exit status (128 + N after signal N, as a shell says).

    Ctrl-C on a terminal reaches the child itself (it is in the terminal's process group); with
    ``forward_interrupt`` (stdin not a terminal) the REPL passes a SIGINT it receives on.
    """
    import signal
    import subprocess

    sys.stdout.flush()
    sys.stderr.flush()
    process = subprocess.Popen(argv)
    while True:
        try:
            status = process.wait()
            break
        except KeyboardInterrupt:
            if forward_interrupt:
                process.send_signal(signal.SIGINT)
    return 128 - status if status < 0 else status


def _forget_last_input(line):
    """Removes ``line`` from readline's history when it is the last entry."""
    try:
        import readline
    except ImportError:
        return
    length = readline.get_current_history_length()
    if length and readline.get_history_item(length) == line:
        readline.remove_history_item(length - 1)


def _drop_secret_lines(redact):
    """Removes the history entries that hold a secret apimacro knows (``redact`` changes them)."""
    import readline

    for index in range(readline.get_current_history_length(), 0, -1):
        item = readline.get_history_item(index)
        if item is not None and redact(item) != item:
            readline.remove_history_item(index - 1)


def _save_history(history, redact=None):
    import readline

    if redact is not None:
        _drop_secret_lines(redact)
    folder = os.path.dirname(history)
    try:
        # $APIMACRO_HOME is owner-only (0700), as `apimacro login` creates it.
        os.makedirs(folder, mode=0o700, exist_ok=True)
        # Created owner-only: a typed line may hold a token.
        os.close(os.open(history, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(history, 0o600)
        readline.write_history_file(history)
    except OSError as error:
        sys.stderr.write(f"apimacro: cannot save the history to {history}: {error}\n")


def main(native, history, interactive):
    """Runs the console until Ctrl-D, ``:quit`` or ``exit()``; returns the exit status.

    Interactive sessions end 0.  With stdin not a terminal, the status is 1
    when any line raised or any command failed, so a script's failure shows.
    """
    sys.argv = [""]
    console = Console(native, interactive)
    sys.displayhook = _redacting_displayhook(native)
    has_readline = interactive and _setup_readline(console, history)
    banner = ""
    if interactive:
        banner = (f"apimacro {sys.modules['_apimacro'].__version__} (Python {sys.version.split()[0]}): "
                  f"{', '.join(_clients())} and apimacro are imported. :help for commands, Ctrl-D to leave.")
        sys.ps1, sys.ps2 = ">>> ", "... "
    status = 0
    try:
        if interactive:
            console.interact(banner=banner, exitmsg="")
        else:
            _run_lines(console)
    except SystemExit as exit:
        code_ = exit.code
        status = code_ if isinstance(code_, int) else (0 if code_ is None else 1)
    except KeyboardInterrupt:
        sys.stderr.write("apimacro: repl interrupted\n")
        status = 130
    finally:
        if has_readline and history:
            _save_history(history, native.redact)
        # As python3's REPL at its end: the atexit handlers registered at the prompt (a :run's
        # own ran when it ended), rlcompleter's among them.
        import atexit

        atexit._run_exitfuncs()
    if status == 0 and not interactive and console.failed:
        status = 1
    # Stdout's reader gone (`| head`): the session, or what stdout still held, ended quietly.
    delivered = flush_stdout()
    if console.output_closed or (not delivered and status == 0):
        status = CLOSED_OUTPUT_STATUS
    return status


def _redacting_displayhook(native):
    """The echo of an expression's value (``repr``), with secrets redacted, kept in ``_``."""

    def displayhook(value):
        if value is None:
            return
        builtins._ = None
        sys.stdout.write(native.redact(repr(value)) + "\n")
        builtins._ = value

    return displayhook


def _run_lines(console):
    """The console fed from a file or pipe: no prompt, no banner; a block
    still open at the end of the input is run as a blank line would."""
    more = False
    number = 0
    while not console.quitting:
        line = sys.stdin.readline()
        if not line:
            break
        number += 1
        if not console.buffer:
            console.first_line = number
        more = console.push(line.rstrip("\n"))
    if more:
        console.push("")
