"""agents: an immutable-state step engine for LLM agents.

Every state of a run is a frozen value; a loop drives a step machine through hooks,
interceptors and tools, and stop signals decide when the run ends. Start with
``AgentState.initial(...)`` and ``AgentLoop(driver, tools=..., hooks=...)``.
"""

from agents.audit import AuditLog
from agents.core.cancellation import CancellationToken
from agents.core.clock import Clock, IdFactory, RandomIds, SystemClock
from agents.core.compaction import CompactionPlan, Compactor, RecordedCompactions, Summarization
from agents.core.compilers import (
    CachedCount,
    DefaultCompiler,
    MessageCompiler,
    TokenWindowCompiler,
    estimate_tokens,
)
from agents.core.driver import AsyncDriver, Driver, SyncDriver
from agents.core.hooks import (
    Hook,
    HookContext,
    HookTrigger,
    InferenceInterceptor,
    ToolInterceptor,
    hook,
    inference_interceptor,
    tool_interceptor,
)
from agents.drivers.function import FunctionDriver
from agents.drivers.litellm import LiteLLMDriver
from agents.drivers.replay import RecordingInterceptor, ReplayDriver
from agents.errors import (
    AgentError,
    AuditLogTampered,
    BlobCorrupted,
    BlobNotFound,
    ConfigurationError,
    ContentError,
    DatasetError,
    DefinitionError,
    EvalGateFailed,
    InvalidArgument,
    InvalidType,
    InvariantViolation,
    MissingExtra,
    ResourceError,
    ScriptExhausted,
    SessionConflict,
    SessionNotFound,
    StateDecodeError,
    StoreUnavailable,
    UsageError,
)
from agents.persistence import (
    AsyncPostgresSessionStore,
    InMemorySessionStore,
    PostgresSessionStore,
    Session,
    SessionRuntime,
    SessionStore,
    SQLiteSessionStore,
)
from agents.persistence.blobs import FileBlobStore
from agents.records.blobs import Blob, BlobStore, ContentLimits, MemoryBlobStore
from agents.records.content import (
    AudioPart,
    DocumentPart,
    FilePart,
    ImagePart,
    MediaPart,
    ReasoningPart,
    TextPart,
)
from agents.records.context import AgentContext, MessageStore
from agents.records.error_info import ErrorInfo, ProviderError, ReplayDivergence
from agents.records.events import (
    ContextCompacted,
    Event,
    ExecutionCompleted,
    ExecutionFailed,
    ExecutionStarted,
    ExecutionStopped,
    InferenceCompleted,
    InferenceDelta,
    InferenceRetry,
    ReasoningDelta,
    StepCompleted,
    StepStarted,
    StopSignalReceived,
    ToolCallBlocked,
    ToolCallCompleted,
    ToolCallStarted,
    ToolServerRestarted,
)
from agents.records.execution import ApprovalDecision, ExecutionState, ExecutionStatus
from agents.records.frozen import History, NestingError
from agents.records.goal import Goal
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.inputs import InputAnswer, InputRequest
from agents.records.messages import Message, Role, ToolCall
from agents.records.record import Record
from agents.records.signals import ExecutionContinuation, StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep, Compaction, StepExecution, StepType, ToolExecution
from agents.records.timeline import TimelineRow
from agents.records.usage import Usage
from agents.shell.loop import AgentLoop
from agents.shell.retry import RetryInterceptor
from agents.shell.subagents import SubagentFailed, subagent_tool
from agents.tools.outcomes import InputRequired
from agents.tools.tool import StopAgent, Tool, ToolContext, ToolResult, Tools, tool

__version__ = "0.1.0"

__all__ = [
    "AgentContext",
    "AgentError",
    "AgentLoop",
    "AgentState",
    "AgentStep",
    "ApprovalDecision",
    "AsyncDriver",
    "AsyncPostgresSessionStore",
    "AudioPart",
    "AuditLog",
    "AuditLogTampered",
    "Blob",
    "BlobCorrupted",
    "BlobNotFound",
    "BlobStore",
    "CachedCount",
    "CancellationToken",
    "Clock",
    "Compaction",
    "CompactionPlan",
    "Compactor",
    "ConfigurationError",
    "ContentError",
    "ContentLimits",
    "ContextCompacted",
    "DatasetError",
    "DefaultCompiler",
    "DefinitionError",
    "DocumentPart",
    "Driver",
    "ErrorInfo",
    "EvalGateFailed",
    "Event",
    "ExecutionCompleted",
    "ExecutionContinuation",
    "ExecutionFailed",
    "ExecutionStarted",
    "ExecutionState",
    "ExecutionStatus",
    "ExecutionStopped",
    "FileBlobStore",
    "FilePart",
    "FunctionDriver",
    "Goal",
    "History",
    "Hook",
    "HookContext",
    "HookTrigger",
    "IdFactory",
    "ImagePart",
    "InMemorySessionStore",
    "InferenceCompleted",
    "InferenceDelta",
    "InferenceInterceptor",
    "InferenceRequest",
    "InferenceResponse",
    "InferenceRetry",
    "InputAnswer",
    "InputRequest",
    "InputRequired",
    "InvalidArgument",
    "InvalidType",
    "InvariantViolation",
    "LiteLLMDriver",
    "MediaPart",
    "MemoryBlobStore",
    "Message",
    "MessageCompiler",
    "MessageStore",
    "MissingExtra",
    "NestingError",
    "PostgresSessionStore",
    "ProviderError",
    "RandomIds",
    "ReasoningDelta",
    "ReasoningPart",
    "Record",
    "RecordedCompactions",
    "RecordingInterceptor",
    "ReplayDivergence",
    "ReplayDriver",
    "ResourceError",
    "RetryInterceptor",
    "Role",
    "SQLiteSessionStore",
    "ScriptExhausted",
    "Session",
    "SessionConflict",
    "SessionNotFound",
    "SessionRuntime",
    "SessionStore",
    "StateDecodeError",
    "StepCompleted",
    "StepExecution",
    "StepStarted",
    "StepType",
    "StopAgent",
    "StopReason",
    "StopSignal",
    "StopSignalReceived",
    "StoreUnavailable",
    "SubagentFailed",
    "Summarization",
    "SyncDriver",
    "SystemClock",
    "TextPart",
    "TimelineRow",
    "TokenWindowCompiler",
    "Tool",
    "ToolCall",
    "ToolCallBlocked",
    "ToolCallCompleted",
    "ToolCallStarted",
    "ToolContext",
    "ToolExecution",
    "ToolInterceptor",
    "ToolResult",
    "ToolServerRestarted",
    "Tools",
    "Usage",
    "UsageError",
    "estimate_tokens",
    "hook",
    "inference_interceptor",
    "subagent_tool",
    "tool",
    "tool_interceptor",
]
