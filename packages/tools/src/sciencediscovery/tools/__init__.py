"""Tool registry, deferred discovery, governed dispatcher, sanitization, error and loop policy."""

from .compose import RunTools, build_tools
from .definitions import (
    GateDecision,
    Handler,
    Specifier,
    ToolAction,
    ToolDefinition,
    ToolGate,
    ToolInvocation,
    ToolObserver,
    ToolOutput,
    Trust,
)
from .dispatcher import ErrorKind, GovernedToolDispatcher
from .errors import (
    DuplicateToolError,
    InvalidToolError,
    OutputRangeError,
    ToolFailure,
    ToolRegistryError,
    ToolsError,
    UnknownAllowedToolError,
    UnknownOutputRefError,
)
from .events import ToolCallFailed, ToolObserverFailed, ToolOutputProcessed
from .loop_policy import LoopPolicy, canonical_arguments
from .read_output import READ_TOOL_OUTPUT, read_tool_output_tool
from .registry import ToolRegistry
from .sanitize import Change, Sanitized, cap_text, is_reserved_tag, sanitize
from .search import TOOL_SEARCH, ToolSearchIndex
from .settings import OUTPUT_STORE_SETTING, ToolSettings
from .slices import OutputSlice, SliceRequest, read_slice
from .store import DiskToolOutputStore, MemoryToolOutputStore, StoredOutput, ToolOutputStore, output_ref

__all__ = [
    "OUTPUT_STORE_SETTING",
    "READ_TOOL_OUTPUT",
    "TOOL_SEARCH",
    "Change",
    "DiskToolOutputStore",
    "DuplicateToolError",
    "ErrorKind",
    "GateDecision",
    "GovernedToolDispatcher",
    "Handler",
    "InvalidToolError",
    "LoopPolicy",
    "MemoryToolOutputStore",
    "OutputRangeError",
    "OutputSlice",
    "RunTools",
    "Sanitized",
    "SliceRequest",
    "Specifier",
    "StoredOutput",
    "ToolAction",
    "ToolCallFailed",
    "ToolDefinition",
    "ToolFailure",
    "ToolGate",
    "ToolInvocation",
    "ToolObserver",
    "ToolObserverFailed",
    "ToolOutput",
    "ToolOutputProcessed",
    "ToolOutputStore",
    "ToolRegistry",
    "ToolRegistryError",
    "ToolSearchIndex",
    "ToolSettings",
    "ToolsError",
    "Trust",
    "UnknownAllowedToolError",
    "UnknownOutputRefError",
    "build_tools",
    "canonical_arguments",
    "cap_text",
    "is_reserved_tag",
    "output_ref",
    "read_slice",
    "read_tool_output_tool",
    "sanitize",
]
