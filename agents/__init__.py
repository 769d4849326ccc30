"""agents: an immutable-state step engine for LLM agents.

Every state of a run is a frozen value; a loop drives a step machine through hooks,
interceptors and tools, and stop signals decide when the run ends. Start with
``AgentState.initial(...)`` and ``AgentLoop(driver, tools=..., hooks=...)``.
"""

from agents.audit import AuditLog
from agents.cancellation import CancellationToken
from agents.clock import Clock, IdFactory, RandomIds, SystemClock
from agents.compaction import CompactionPlan, Compactor, RecordedCompactions, Summarization
from agents.compilers import (
    CachedCount,
    DefaultCompiler,
    MessageCompiler,
    TokenWindowCompiler,
    estimate_tokens,
)
from agents.context import AgentContext, MessageStore
from agents.drivers.base import AsyncDriver, Driver, SyncDriver
from agents.drivers.function import FunctionDriver
from agents.drivers.litellm import LiteLLMDriver
from agents.drivers.replay import RecordingInterceptor, ReplayDriver
from agents.errors import (
    AgentError,
    AuditLogTampered,
    ConfigurationError,
    DefinitionError,
    ErrorInfo,
    InvariantViolation,
    ProviderError,
    ReplayDivergence,
    ScriptExhausted,
    SessionConflict,
    SessionNotFound,
    StateDecodeError,
)
from agents.events import (
    ContextCompacted,
    Event,
    ExecutionCompleted,
    ExecutionFailed,
    ExecutionStarted,
    ExecutionStopped,
    InferenceCompleted,
    InferenceDelta,
    InferenceRetry,
    StepCompleted,
    StepStarted,
    StopSignalReceived,
    ToolCallBlocked,
    ToolCallCompleted,
    ToolCallStarted,
)
from agents.execution import ApprovalDecision, ExecutionState, ExecutionStatus
from agents.goal import Goal
from agents.hooks import (
    Hook,
    HookContext,
    HookTrigger,
    InferenceInterceptor,
    ToolInterceptor,
    hook,
    inference_interceptor,
    tool_interceptor,
)
from agents.inference import InferenceRequest, InferenceResponse
from agents.loop import AgentLoop
from agents.messages import Message, Role, ToolCall
from agents.persistence import (
    AsyncPostgresSessionStore,
    InMemorySessionStore,
    PostgresSessionStore,
    Session,
    SessionRuntime,
    SessionStore,
    SQLiteSessionStore,
)
from agents.persistent import History
from agents.record import Record
from agents.retry import RetryInterceptor
from agents.signals import ExecutionContinuation, StopReason, StopSignal
from agents.state import AgentState
from agents.step import AgentStep, Compaction, StepExecution, StepType, ToolExecution
from agents.subagents import SubagentFailed, subagent_tool
from agents.timeline import TimelineRow
from agents.tools import StopAgent, Tool, ToolContext, ToolResult, Tools, tool
from agents.usage import Usage

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
    "AuditLog",
    "AuditLogTampered",
    "CachedCount",
    "CancellationToken",
    "Clock",
    "Compaction",
    "CompactionPlan",
    "Compactor",
    "ConfigurationError",
    "ContextCompacted",
    "DefaultCompiler",
    "DefinitionError",
    "Driver",
    "ErrorInfo",
    "Event",
    "ExecutionCompleted",
    "ExecutionContinuation",
    "ExecutionFailed",
    "ExecutionStarted",
    "ExecutionState",
    "ExecutionStatus",
    "ExecutionStopped",
    "FunctionDriver",
    "Goal",
    "History",
    "Hook",
    "HookContext",
    "HookTrigger",
    "IdFactory",
    "InMemorySessionStore",
    "InferenceCompleted",
    "InferenceDelta",
    "InferenceInterceptor",
    "InferenceRequest",
    "InferenceResponse",
    "InferenceRetry",
    "InvariantViolation",
    "LiteLLMDriver",
    "Message",
    "MessageCompiler",
    "MessageStore",
    "PostgresSessionStore",
    "ProviderError",
    "RandomIds",
    "Record",
    "RecordedCompactions",
    "RecordingInterceptor",
    "ReplayDivergence",
    "ReplayDriver",
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
    "SubagentFailed",
    "Summarization",
    "SyncDriver",
    "SystemClock",
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
    "Tools",
    "Usage",
    "estimate_tokens",
    "hook",
    "inference_interceptor",
    "subagent_tool",
    "tool",
    "tool_interceptor",
]
