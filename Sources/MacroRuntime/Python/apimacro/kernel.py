"""A Jupyter kernel with apimacro: plain ipykernel over the apimacro wheel.

    python -m apimacro.kernel install [--user | --prefix PREFIX]   # register the kernelspec
    python -m apimacro.kernel -f CONNECTION_FILE                   # what Jupyter runs

The kernel is IPython's own (ipykernel, installed beside the wheel), started with apimacro's
additions: the ``%apimacro record FILE`` / ``%apimacro replay FILE`` / ``%apimacro live`` magics,
and ``apimacro.output(rows)`` displayed as an HTML table. Needs the apimacro wheel, not the
binary: ``import apimacro`` here is the extension module of this Python.
"""

import json
import os
import shutil
import sys
import tempfile

NAME = "apimacro"
USAGE = "usage: python -m apimacro.kernel install [--user | --prefix PREFIX]"


def kernel_spec() -> dict:
    """The kernel.json: this Python runs the kernel (the virtualenv the wheel is installed in)."""
    return {
        "argv": [sys.executable, "-m", "apimacro.kernel", "-f", "{connection_file}"],
        "display_name": f"apimacro (Python {sys.version_info[0]}.{sys.version_info[1]})",
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def install(arguments: list) -> str:
    """Registers the kernelspec ``apimacro`` and returns its folder.

    Default: in this Python's prefix (the active virtualenv), where Jupyter started from it looks;
    ``--user``: the user's Jupyter data folder; ``--prefix PREFIX``: PREFIX/share/jupyter/kernels.
    """
    user = False
    prefix = None
    items = iter(arguments)
    for argument in items:
        if argument == "--user":
            user = True
        elif argument == "--prefix":
            prefix = next(items, None)
            if prefix is None:
                raise SystemExit(f"apimacro kernel install: --prefix needs a folder; {USAGE}")
        elif argument in ("-h", "--help"):
            print(USAGE)
            raise SystemExit(0)
        else:
            raise SystemExit(f"apimacro kernel install: unknown argument {argument}; {USAGE}")
    if user and prefix is not None:
        raise SystemExit(f"apimacro kernel install: --user and --prefix exclude each other; {USAGE}")
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:
        raise SystemExit(
            "apimacro kernel install: jupyter_client is not installed in this Python; "
            f"{sys.executable} -m pip install ipykernel") from None
    if not user and prefix is None:
        prefix = sys.prefix
    folder = tempfile.mkdtemp(prefix="apimacro-kernelspec-")
    try:
        with open(os.path.join(folder, "kernel.json"), "w", encoding="utf-8") as spec:
            json.dump(kernel_spec(), spec, indent=1)
        return KernelSpecManager().install_kernel_spec(folder, kernel_name=NAME, user=user, prefix=prefix)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def launch(arguments: list) -> None:
    """Starts ipykernel's kernel with apimacro's magics and display loaded into its shell."""
    from ipykernel.kernelapp import IPKernelApp

    from . import _notebook

    app = IPKernelApp.instance()
    app.initialize(arguments)
    _notebook.load_ipython_extension(app.shell)
    app.start()


def main(arguments: list) -> None:
    if arguments and arguments[0] == "install":
        print(f"apimacro: installed the kernelspec {NAME} in {install(arguments[1:])}")
    else:
        launch(arguments)


if __name__ == "__main__":
    main(sys.argv[1:])
