import CLlama
import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// The one llama context of an on-device model value, shared by its sessions:
/// each request decodes on a sequence of it, and one scheduler decodes a token
/// for every active sequence in a single `llama_decode` (`BatchScheduler`).
///
/// Why one context and not one per session: a step that decodes a token for
/// four sequences costs far less than four steps of one, while four contexts
/// are four OpenMP teams taking turns on the same cores, together no faster
/// than one (Benchmarks/RESULTS.md, "Sessions answering at once"). The KV
/// cache holds up to `contextSize` cells for each sequence,
/// starting with 512 and made again larger as conversations need, smaller
/// when a new, short one starts (`WindowGrowth`). A context starts with one sequence, so a model that
/// answers one session at a time costs one window of KV cache at most, and
/// is made again with `sequences` of them the first time more turns wait
/// than sequences are idle (`ContextGrowth`).
///
/// `@unchecked Sendable` with a written reason: the llama pointer, the batch,
/// the sequence caches and the active turns are touched only by the scheduler,
/// which runs on one compute lane at a time (`State.running` is set from its
/// start until it finds nothing to do, so no second scheduler starts). The
/// queue, the sequence leases and `running` are behind `state`'s lock, taken
/// by submitting tasks, cancellation handlers and ending sessions.
final class BatchedContext: @unchecked Sendable {
  /// How the context is made.
  struct Settings: Equatable, Sendable {
    /// Tokens of KV cache per sequence: the most one conversation may hold.
    var contextSize: Int
    var batchSize: Int
    var threads: Int
    /// The most requests decoded together, each on a sequence of its own.
    var sequences: Int
    /// Flash attention as decided (`AttentionChoice`): the setting a context
    /// starts with, and the depth past which it is made without the kernel
    /// (what llama.cpp has now is `BatchedContext.attention`).
    var flashAttention: AttentionChoice.Decision
    /// Weights read in and moved to 2 MiB pages, or mapped.
    var memory = MemoryPlan.mapped("llama.cpp's default")
  }

  /// What the scheduler has decoded, for tests and benchmarks.
  struct Steps: Equatable, Sendable {
    /// `llama_decode` calls.
    var count = 0
    /// The most sequences one call decoded together.
    var widest = 0
    /// Calls the abort callback stopped part-way (a cancelled prefill).
    var aborted = 0
  }

  struct State {
    var slots: SequenceSlots
    var steps = Steps()
    /// Turns waiting for a sequence, first come first served.
    var queue: [SequenceTurn] = []
    var running = false
    /// Turns rendering their prompts, soon to be queued (`TurnAnnouncement`).
    var announced = 0
  }

  let model: LlamaModel
  let settings: Settings
  let state: Locked<State>
  /// Where turns' states are saved and looked up, if the model value has a cache.
  let promptCache: PromptCache?
  /// What a saved state must have been made with to load here, for each
  /// flash-attention setting the context can be in (`attention`).
  let cacheKeys: [(type: llama_flash_attn_type, key: PromptCacheKey)]
  /// Where the scheduler runs: `ComputeLanes.shared`, or lanes whose
  /// threads the OS refuses, in tests.
  let lanes: ComputeLanes
  /// How long a scheduler starting a burst waits for announced turns
  /// (`defaultArrivalWait`; tests give it longer).
  let arrivalWait: Duration
  /// The tag of this context's sequence states (`SequenceStateLayout`),
  /// read when a context is made; behind a lock because `prepare()` may make
  /// the context on another thread than the scheduler's.
  let stateTag = Locked<[UInt8]?>(nil)
  /// Guards `pointer`: every read and write of it, by `prepare()`, the
  /// scheduler, growth (which holds it across the whole swap, free to store)
  /// and tests asking whether it exists.
  let creation = NSLock()
  /// True once growing failed (no memory): the context stays as it is.
  var growthFailed = false
  /// Cells of KV cache each sequence has now: from `initialCells` up to the
  /// window, grown as conversations need and shrunk when a short one starts
  /// (`WindowGrowth`). Under `creation`,
  /// like `pointer`: `makeContext` reads it for `prepare()` on another thread.
  var cells: Int
  /// The flash-attention setting the context is made with now: the
  /// decision's, and off past its switch depth (`WindowGrowth`). Under
  /// `creation`, like `cells`.
  var attention: llama_flash_attn_type
  /// Moves the model's weights to 2 MiB pages on the first step
  /// (`settings.memory`); reset whenever the context is made again.
  let hugePages: HugePageMove
  /// True once making the window again (larger or smaller) failed (no
  /// memory): it stays as it is from then on.
  var windowGrowthFailed = false

  // The scheduler's own, touched on its lane only (see the type's comment);
  // `pointer` only under `creation`, since `prepare()` sets it too.
  var pointer: OpaquePointer?
  var batch: llama_batch
  var caches: [SequenceCache]
  var active: [SequenceTurn] = []
  /// The flags of the turns in the step being decoded, for the abort callback.
  var stepFlags: [CancellationFlag] = []
  /// Steps since the scheduler started, for pacing text deliveries.
  var deliveryClock = 0

  init(
    model: LlamaModel, settings: Settings, promptCache: PromptCache? = nil, lanes: ComputeLanes = .shared,
    arrivalWait: Duration = BatchedContext.defaultArrivalWait
  ) {
    var settings = settings
    // Room for every sequence's next token in one step.
    settings.batchSize = max(settings.batchSize, settings.sequences)
    self.model = model
    self.settings = settings
    self.promptCache = promptCache
    self.lanes = lanes
    self.arrivalWait = arrivalWait
    self.cacheKeys =
      promptCache == nil
      ? []
      : settings.flashAttention.types.map {
        ($0, PromptCacheKey(model: model.fingerprint, offload: model.offload, flashAttention: $0))
      }
    self.attention = settings.flashAttention.type
    self.hugePages = HugePageMove(weights: settings.memory.weightsInMemory ? model.weightPages : nil)
    self.cells = min(Self.window(of: settings), Self.initialCells)
    self.state = Locked(State(slots: SequenceSlots(count: 1)))
    self.caches = [SequenceCache(id: 0)]
    self.batch = llama_batch_init(Int32(settings.batchSize), 0, 1)
  }

  deinit {
    llama_batch_free(batch)
    if let pointer { llama_free(pointer) }
  }

  /// Queues `request` for a sequence and returns its outcome once generated;
  /// `announcement`, if the request announced itself, is settled as it queues.
  /// Cancelling the calling task takes a queued turn out at once, and stops a
  /// running one at the next step (or mid-step during prefill) without
  /// disturbing the other sequences.
  func submit(_ request: GenerationRequest, announcement: TurnAnnouncement? = nil) async throws -> GenerationOutcome {
    let turn = SequenceTurn(request)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let starts = state.withLock { state -> Bool? in
          announcement?.settle(&state)
          if turn.flag.isSet { return nil }
          turn.continuation = continuation
          state.queue.append(turn)
          defer { state.running = true }
          return !state.running
        }
        switch starts {
        case nil: continuation.resume(throwing: CancellationError())
        case true?: startScheduler()
        case false?: break
        }
      }
    } onCancel: {
      turn.flag.set()
      let queued = state.withLock { state -> CheckedContinuation<GenerationOutcome, any Error>? in
        guard let index = state.queue.firstIndex(where: { $0 === turn }) else { return nil }
        state.queue.remove(at: index)
        defer { turn.continuation = nil }
        return turn.continuation
      }
      queued?.resume(throwing: CancellationError())
    }
  }

  /// Starts the scheduler on a compute lane once the cores are free. From a
  /// task of its own, not the submitter's: a cancelled submitter must not
  /// strand the turns queued behind it.
  private func startScheduler() {
    let threads = settings.threads
    let lanes = self.lanes
    // The budget's cores, then a lane, given back in that order (`ComputeLane`).
    Task.detached {
      do {
        try await ComputeLane.run(threads: threads, on: lanes) { self.runScheduler() }
      } catch {
        // No lane, so no scheduler ran: the queued turns fail, and the next
        // submission starts one again.
        self.failEverything(error)
      }
    }
  }

  /// A session has ended: its sequences belong to nobody now.
  func ownerEnded(_ owner: ObjectIdentifier) {
    state.withLock { $0.slots.ownerEnded(owner) }
  }

  /// Whether no turn is queued or running: tests use it to see that a
  /// cancelled generation really stopped computing.
  var isIdle: Bool { state.withLock { !$0.running } }

  /// How many sequences no live session owns (for tests: a session's end
  /// reaches the context with its last reference, which a finishing request's
  /// task may drop on another thread just after the caller's `respond` returned).
  var unownedSequences: Int { state.withLock { $0.slots.unownedCount } }

  /// How many sequences the context has now: one until requests overlap.
  var sequenceCount: Int { state.withLock { $0.slots.count } }

  /// What the scheduler has decoded so far.
  var steps: Steps { state.withLock { $0.steps } }

  /// Whether llama.cpp's context exists yet (made by the first request).
  var isCreated: Bool { creation.withLock { pointer != nil } }

  /// Cells of KV cache each sequence has now (for tests and benchmarks).
  var cellsPerSequence: Int { creation.withLock { cells } }

  /// The flash-attention setting the context is made with now (for tests and benchmarks).
  var attentionNow: llama_flash_attn_type { creation.withLock { attention } }

  /// The key of the states the context saves and loads now: its attention
  /// setting's (a state of the other setting has V laid out otherwise).
  var cacheKey: PromptCacheKey? {
    let type = creation.withLock { attention }
    return cacheKeys.first { $0.type == type }?.key
  }

  /// Makes the llama context now, so that the first request does not wait
  /// for its KV cache to be allocated and cleared.
  ///
  /// On a Dispatch worker, not a compute lane: making a context computes
  /// nothing, and a lane it kept busy made a scheduler starting meanwhile
  /// lease a second lane, with an OpenMP team of its own (`ComputeLane`).
  func prepare() async throws {
    try await withCheckedContinuation { continuation in
      DispatchQueue.global(qos: .userInitiated).async {
        continuation.resume(returning: Result { () throws(HybridInferenceError) in _ = try self.created() })
      }
    }.get()
  }

  /// The llama context, made on first use (by `prepare()` or the scheduler)
  /// with one sequence, or as many as it had when growing left none.
  func created() throws(HybridInferenceError) -> OpaquePointer {
    creation.lock()
    defer { creation.unlock() }
    if let pointer { return pointer }
    let context = try makeContext(sequences: state.withLock { $0.slots.count })
    pointer = context
    return context
  }

  /// The tokens one sequence may hold: `contextSize` rounded up as llama.cpp
  /// rounds a context (to 256 cells), so a session's window is what a
  /// context of its own would be.
  static func window(of settings: Settings) -> Int { (settings.contextSize + 255) / 256 * 256 }

  /// A llama context with `sequences` streams of `cells` cells each; called
  /// under `creation`.
  func makeContext(sequences: Int) throws(HybridInferenceError) -> OpaquePointer {
    var params = llama_context_default_params()
    let share = cells
    params.n_ctx = UInt32(clamping: share * sequences)
    params.n_batch = UInt32(settings.batchSize)
    params.n_ubatch = UInt32(settings.batchSize)
    params.n_seq_max = UInt32(sequences)
    // A stream of cells per sequence, not one unified pool: with a unified
    // pool llama.cpp's answers change with what else is in the batch (greedy
    // SmolLM2 answers differed from the first token, llama-server
    // `--kv-unified` too), while separate streams give each sequence the
    // answer it gets alone.
    params.kv_unified = false
    params.n_threads = Int32(settings.threads)
    params.n_threads_batch = Int32(settings.threads)
    params.no_perf = true
    // The KV types stay llama.cpp's defaults and flash attention is the
    // decided one for the depth: the prompt cache's key (`cacheKey`) reads the same.
    params.flash_attn_type = attention
    hugePages.reset()
    hugePages.install(in: &params)
    LlamaBackend.inFlight.enter()
    defer { LlamaBackend.inFlight.leave() }
    guard let context = llama_init_from_model(model.pointer, params) else {
      throw .generationFailed("llama.cpp could not create a context of \(share * sequences) tokens")
    }
    let decision = settings.flashAttention
    let switched = attention == decision.type ? "" : "off, a conversation past depth \(decision.offFromDepth ?? 0): "
    LlamaBackend.logSink.current.log(
      LogRecord(level: .info, category: .local, message: "flash attention \(switched)\(decision.reason)"))
    if promptCache != nil {
      let tag = Self.stateTag(of: context)
      stateTag.withLock { $0 = tag }
    }
    return context
  }

  /// Installs (or removes) llama.cpp's abort callback, which lets a step stop
  /// between compute nodes once every turn in it is cancelled.
  ///
  /// Only for steps that prefill: llama.cpp calls it once per graph node while
  /// the other threads wait at a barrier, a cost a single-token step feels
  /// (about a tenth of its time); those check for cancellation between steps instead.
  func setAbortCallback(_ context: OpaquePointer, enabled: Bool) {
    guard enabled else {
      llama_set_abort_callback(context, nil, nil)
      return
    }
    llama_set_abort_callback(
      context,
      { userData in
        guard let userData else { return false }
        return Unmanaged<BatchedContext>.fromOpaque(userData).takeUnretainedValue().stepIsCancelled
      }, Unmanaged.passUnretained(self).toOpaque())
  }

  /// True when every turn of the running step was cancelled, or the process is exiting.
  private var stepIsCancelled: Bool {
    LlamaBackend.inFlight.isStopping || stepFlags.allSatisfy(\.isSet)
  }
}
