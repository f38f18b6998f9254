import CLlama
import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// A GGUF model loaded by llama.cpp: its weights, vocabulary and chat template.
///
/// `@unchecked Sendable`, on purpose: nothing here changes after `init` but
/// the vocabulary byte table, built once behind its own lock, and llama.cpp supports any number of contexts evaluating one model
/// at once. Every mutable llama.cpp object lives in a `BatchedContext`.
final class LlamaModel: @unchecked Sendable {
  let path: String
  /// The file that was loaded, for the prompt cache's key.
  let fingerprint: ModelFingerprint
  /// `general.name` from the file.
  let name: String?
  /// The chat template the file carries, if any.
  let chatTemplate: String?
  /// The file's chat template, parsed once at load and shared by every request.
  let template: ChatTemplate
  /// The context length the model was trained with.
  let trainedContextLength: Int
  /// The width of one attention head, for `AttentionChoice`.
  let attentionHeadSize: Int?
  let pointer: OpaquePointer
  let vocab: OpaquePointer
  /// Read into the process rather than mapped from the file (`MemoryPlan`).
  let weightsInMemory: Bool
  /// Where its layers went (`OffloadPlan`): the plan, or the CPU when the
  /// plan's GPU could not load them.
  let offload: OffloadDecision
  /// The weights' buffers already moved to 2 MiB pages (`HugePageMove`).
  let weightPages = WeightPages()
  /// The projectors loaded for this model, by path, held weakly
  /// (`projector(at:threads:)`).
  let projectors = Locked<[String: WeakProjector]>([:])
  /// The one lazily built piece of state, behind its own lock.
  private let vocabularyBytesCache = Locked<VocabularyBytes?>(nil)

  /// Loads `file` (already checked by `GGUFFile`) on the calling thread.
  ///
  /// Only if `path` still names the file that was checked (`FileIdentity`),
  /// and through the descriptor that compared it, so that a file renamed over
  /// the path after the check is never what llama.cpp reads.
  ///
  /// With `weightsInMemory`, llama.cpp reads the weights into memory of the
  /// process's own instead of mapping the file (`MemoryPlan`); the layers
  /// go where `offload` says (`OffloadPlan`), and to the CPU when that GPU
  /// cannot load them.
  init(
    path: String, file: GGUFFile, options: LoadOptions = .init(), progress: (@Sendable (Double) -> Void)?
  ) throws(HybridInferenceError) {
    let weightsInMemory = options.weightsInMemory
    let opened: OpenModelFile
    do {
      opened = try OpenModelFile(path: path)
    } catch {
      throw .invalidModelFile(path: path, reason: error.reason)
    }
    guard opened.identity == file.identity else {
      throw .invalidModelFile(path: path, reason: "the file changed after it was checked; ask again to check it anew")
    }
    LlamaBackend.ensureInitialized()
    var params = llama_model_default_params()
    if AMXGuard.disablesExtraBufferTypes(cpu: .current, build: .current) {
      params.use_extra_bufts = false
    }
    if weightsInMemory { params.load_mode = LLAMA_LOAD_MODE_NONE }
    // Always a callback: it also stops the load when the process exits.
    let progressBox = ProgressBox(progress ?? { _ in })
    params.progress_callback = { value, userData in
      guard let userData else { return true }
      Unmanaged<ProgressBox>.fromOpaque(userData).takeUnretainedValue().report(Double(value))
      return !LlamaBackend.inFlight.isStopping
    }
    params.progress_callback_user_data = Unmanaged.passUnretained(progressBox).toOpaque()
    LlamaBackend.inFlight.enter()
    // Without /proc (not Linux), the path itself, just compared.
    let loadPath = opened.stablePath ?? path
    let (found, placed) = withExtendedLifetime((progressBox, opened)) {
      Self.load(loadPath, params: params, plan: options.offload)
    }
    LlamaBackend.inFlight.leave()
    guard let loaded = found else {
      throw .invalidModelFile(path: path, reason: "llama.cpp could not load it")
    }
    guard let vocab = llama_model_get_vocab(loaded) else {
      llama_model_free(loaded)
      throw .invalidModelFile(path: path, reason: "the model has no vocabulary")
    }
    self.path = path
    self.weightsInMemory = weightsInMemory
    self.offload = OffloadDecision(placed)
    self.fingerprint = ModelFingerprint(path: path, identity: opened.identity, descriptor: opened.descriptor)
    self.pointer = loaded
    self.vocab = vocab
    self.name = file.name
    let chatTemplate = llama_model_chat_template(loaded, nil).map { String(cString: $0) }
    self.chatTemplate = chatTemplate
    self.template = ChatTemplate(
      template: chatTemplate, bosToken: Self.text(of: llama_vocab_bos(vocab), in: vocab),
      eosToken: Self.text(of: llama_vocab_eos(vocab), in: vocab))
    self.trainedContextLength = Int(llama_model_n_ctx_train(loaded))
    self.attentionHeadSize = file.attentionHeadSize
  }

  /// A special token's text (`<|im_start|>`), as transformers binds `bos_token`; empty when the vocabulary has none.
  private static func text(of token: llama_token, in vocab: OpaquePointer) -> String {
    guard token != LLAMA_TOKEN_NULL, let text = llama_vocab_get_text(vocab, token) else { return "" }
    return String(cString: text)
  }

  deinit {
    llama_model_free(pointer)
  }

  /// The tokens of `text`. With `parseSpecial`, marker text (`<|im_start|>`)
  /// becomes control tokens: only for text the library or the template wrote.
  func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws(HybridInferenceError) -> [llama_token] {
    // llama.cpp counts the text's bytes, and the tokens it may write, in int32.
    guard let utf8Count = Int32(exactly: text.utf8.count), utf8Count <= Int32.max - 8 else {
      throw .unsupportedRequest("the prompt is \(text.utf8.count) bytes; llama.cpp tokenizes less than 2 GiB at once")
    }
    var tokens = [llama_token](repeating: 0, count: Int(utf8Count) + 8)
    var count = llama_tokenize(vocab, text, utf8Count, &tokens, Int32(tokens.count), addSpecial, parseSpecial)
    if count < 0, count != Int32.min {
      tokens = [llama_token](repeating: 0, count: Int(-count))
      count = llama_tokenize(vocab, text, utf8Count, &tokens, Int32(tokens.count), addSpecial, parseSpecial)
    }
    guard count >= 0 else { throw .generationFailed("the prompt could not be tokenized") }
    return Array(tokens.prefix(Int(count)))
  }

  /// The control tokens that `texts` hold (a call syntax's markers, such as
  /// Mistral's `[TOOL_CALLS]` and `[ARGS]`): the answer shows their text, as
  /// llama.cpp's preserved tokens, so that the call can be read back.
  func controlTokens(in texts: [String]) throws(HybridInferenceError) -> Set<llama_token> {
    var found: Set<llama_token> = []
    for text in texts where !text.isEmpty {
      for token in try tokenize(text, addSpecial: false, parseSpecial: true) where isControl(token) {
        found.insert(token)
      }
    }
    return found
  }

  /// Whether `token` is a control token (a turn marker, BOS, EOS).
  func isControl(_ token: llama_token) -> Bool {
    llama_vocab_get_attr(vocab, token).rawValue & LLAMA_TOKEN_ATTR_CONTROL.rawValue != 0
  }

  /// The bytes of one token; control tokens render as nothing unless
  /// `special` (a tool call's markers, which the reader must see).
  func piece(of token: llama_token, special: Bool = false) -> [UInt8] {
    var buffer = [CChar](repeating: 0, count: 64)
    var length = llama_token_to_piece(vocab, token, &buffer, Int32(buffer.count), 0, special)
    if length < 0 {
      // The size needed, as a negative int32 (Int32.min has no Int32 negation).
      buffer = [CChar](repeating: 0, count: Int(min(length.magnitude, UInt32(Int32.max))))
      length = llama_token_to_piece(vocab, token, &buffer, Int32(buffer.count), 0, special)
    }
    return buffer.prefix(Int(max(length, 0))).map { UInt8(bitPattern: $0) }
  }

  /// Every token's bytes, for constrained sampling; read on first use (tens
  /// of milliseconds) and kept with the model.
  var vocabularyBytes: VocabularyBytes {
    vocabularyBytesCache.withLock { cached in
      if let cached { return cached }
      let table = VocabularyBytes(model: self)
      cached = table
      return table
    }
  }

  /// Whether `token` ends the answer (end of sequence, end of turn).
  func isEndOfGeneration(_ token: llama_token) -> Bool {
    llama_vocab_is_eog(vocab, token)
  }
}

/// Carries a progress closure through llama.cpp's `void *` user data.
private final class ProgressBox: Sendable {
  let report: @Sendable (Double) -> Void
  init(_ report: @escaping @Sendable (Double) -> Void) { self.report = report }
}
