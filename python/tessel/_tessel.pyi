"""Type stubs of ``tessel._tessel``, the package's native half (PyO3)."""

class NativeModule:
    """A module compiled for the host CPU."""

    def signatures(self) -> list[tuple[str, list[tuple[str, list[int]]]]]:
        """``[(entry, [(mlir element type, shape), ...]), ...]`` in module order."""
    def call_addresses(self, entry: str, addresses: list[int]) -> None:
        """Calls ``entry`` on buffers given by address (checked by the caller)."""

def compile(text: str, name: str, knobs: dict[str, object] | None = None) -> NativeModule:
    """Compiles module ``text`` (``name`` in diagnostics) with schedule ``knobs``."""

def tune(text: str, name: str, entry: str, search: tuple[float, int, bool, float]) -> str:
    """``tessel tune`` in process; ``search`` = (budget s, beam, use cache, compile timeout s); its JSON line."""

def prepare_kernel(id: str, text: str, name: str, entry: str) -> None:
    """Compiles a kernel module for XLA calls naming ``id``."""

def is_prepared(id: str) -> bool:
    """Whether kernel ``id`` is compiled in this process."""

def ffi_handler_address() -> int:
    """The address of the XLA FFI handler."""

def knob_names() -> list[str]:
    """The schedule knobs ``compile`` accepts."""
