import CLlama
import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// Turns a transcript into the prompt text the model was trained on.
///
/// The GGUF's own Jinja template (`tokenizer.chat_template`) is run by the
/// library's engine (`JinjaTemplate`), with `messages`, `tools`,
/// `add_generation_prompt`, `bos_token` and `eos_token` bound as transformers
/// binds them, so the prompt is the one the model was trained on (SmolLM2's
/// default system turn included). A template the engine cannot run (an
/// unsupported feature, a `raise_exception`) falls back to llama.cpp's built-in
/// matcher (`llama_chat_apply_template`), and the fallback is logged; a model
/// with neither gets `System: …`, `User: …`, `Assistant:` lines.
///
/// No string of the conversation becomes markup: the template is also
/// rendered with a placeholder for every body, call id, name, argument and
/// tool description (`PromptMask`), and the output is split there
/// (`RenderedPrompt`), so markers inside them are never read as the
/// template's own. When the two renders disagree (a template that rewrites
/// a string, or branches on one), the engine's prompt is not used.
///
/// The template is input (a model file from anywhere): each render has a
/// budget (`JinjaBudget`), and one that passes it falls back as any failing
/// template does. A template that passed its budget once is not run again for
/// this model (`overBudget`): a hostile template costs one budget, not one per
/// request.
struct ChatTemplate: Sendable {
  /// The template text from the GGUF file; nil when the file has none.
  let template: String?
  /// The parsed template, or why it could not be parsed; nil without a template.
  let compiled: Result<JinjaTemplate, JinjaError>?
  let bosToken: String
  let eosToken: String
  /// The first budget error a render of this template met; shared by every
  /// copy of the template (a loaded model's requests), hence behind a lock.
  private let overBudget = Locked<JinjaError?>(nil)
  /// The template's call syntax once read (`toolSyntax`): reading it renders
  /// the template three times, so every copy of the template (a loaded
  /// model's requests) shares one answer, hence behind a lock.
  let toolSyntaxCache = Locked<ToolCallSyntax??>(nil)

  init(template: String?, bosToken: String = "", eosToken: String = "") {
    self.template = template
    self.bosToken = bosToken
    self.eosToken = eosToken
    compiled = template.map { source in Result { () throws(JinjaError) in try JinjaTemplate(source) } }
  }

  /// One message in llama.cpp's terms, with the tool fields transformers
  /// templates read (`tool_calls`, `tool_call_id`, `name`).
  struct Message: Equatable {
    var role: String
    var content: String
    /// An assistant message's calls.
    var toolCalls: [Part.FunctionCall] = []
    /// A `tool` message's call id and tool name.
    var toolCallID: String? = nil
    var name: String? = nil
    /// An on-device answer's thoughts, as llama.cpp hands them to a template
    /// (`reasoning_content`); the template decides whether to print them.
    var reasoningContent: String? = nil
  }

  /// The messages of `transcript`: instructions as `system`, then every turn.
  /// Media in the new prompt make the request unsupported unless `reading`
  /// takes them; the images `reading` takes, in any user turn, become its
  /// marker; other media are read as placeholders (`DeviceMedia`).
  ///
  /// Tool calls and outputs become the template's own `tool_calls` and `tool`
  /// messages when `syntax` is a template family; in the generic format they
  /// are text: the call as its JSON object, each output as a user message.
  /// A call or output nested deeper than `JSONValue.maximumDepth` is
  /// `invalidTranscript`, before anything walks it (recursively).
  static func messages(
    of transcript: Transcript, syntax: ToolCallSyntax? = nil, reading: DeviceMedia.Reading = .textOnly
  ) throws(HybridInferenceError) -> [Message] {
    try transcript.checkNesting()
    var messages: [Message] = []
    if let instructions = transcript.instructions, !instructions.isEmpty {
      messages.append(Message(role: "system", content: instructions))
    }
    let inTemplate = syntax?.usesTemplateTools ?? false
    try DeviceMedia.checkNewPrompt(of: transcript, reading: reading)
    let newPrompt = DeviceMedia.newPromptIndex(of: transcript)
    let marker: String? =
      switch reading {
      case .images(let marker): marker
      case .textOnly: nil
      }
    for (index, entry) in transcript.entries.enumerated() {
      let text = DeviceMedia.text(of: entry, marker: marker, newPrompt: index == newPrompt)
      let outputs = entry.toolOutputs
      for output in outputs {
        messages.append(
          inTemplate
            ? Message(role: "tool", content: output.outputText, toolCallID: output.id, name: output.name)
            : Message(role: "user", content: ToolOutputPrompt.generic(output)))
      }
      if !outputs.isEmpty && text.isEmpty { continue }
      let role = entry.role == .user ? "user" : "assistant"
      let calls = entry.toolCalls
      let reasoning = Self.deviceThoughts(of: entry)
      if inTemplate || calls.isEmpty {
        messages.append(Message(role: role, content: text, toolCalls: calls, reasoningContent: reasoning))
      } else {
        let written = calls.map {
          #"{"name": "# + OrderedJSON.quote($0.name) + #", "arguments": "# + $0.argumentsJSON + "}"
        }
        messages.append(
          Message(
            role: role, content: ([text] + written).filter { !$0.isEmpty }.joined(separator: "\n"),
            reasoningContent: reasoning))
      }
    }
    return messages
  }

  /// The thoughts of an answer the on-device model wrote, if any. Another
  /// backend's thoughts (a cloud model's summaries) are its own and never
  /// reach the device's template.
  static func deviceThoughts(of entry: Transcript.Entry) -> String? {
    guard entry.role == .model, entry.producer == nil, entry.modelVersion == LocalSystemModel.modelVersion else {
      return nil
    }
    let thoughts = entry.content.thoughtText
    return thoughts.isEmpty ? nil : thoughts
  }

  /// The prompt for `messages`; with `addGenerationPrompt` it ends where the
  /// assistant's answer begins. A template fallback goes to `log`, with the
  /// reason. `cancellation` stops the template's render at its next step
  /// (the plain layout is returned then; the caller is expected to throw).
  func render(
    _ messages: [Message], tools: [ToolDeclaration] = [], addGenerationPrompt: Bool = true,
    switches: [String: JinjaValue] = [:], log: LogHandler = LlamaBackend.logSink.current,
    cancellation: JinjaCancellation? = nil
  ) -> RenderedPrompt {
    if let compiled {
      let result =
        overBudget.withLock { $0 }.map { .failure($0) }
        ?? renderJinja(compiled, messages, addGenerationPrompt, tools, switches, cancellation)
      switch result {
      case .success(let prompt): return prompt
      case .failure(let error) where error.kind == .cancelled:
        return Self.plain(messages, addGenerationPrompt: addGenerationPrompt)
      case .failure(let error):
        if error.kind == .limit { overBudget.withLock { $0 = $0 ?? error } }
        log.log(
          LogRecord(
            level: .warning, category: .local,
            message: "the model's chat template could not be used (\(error)); using llama.cpp's built-in template"))
      }
    }
    // The built-in matcher reads roles and bodies only.
    if let template {
      let mask = PromptMask()
      let masked = messages.map { message in
        Message(role: message.role, content: mask.placeholder(for: message.content))
      }
      if let real = Self.applyBuiltIn(template, messages, addGenerationPrompt),
        let marked = Self.applyBuiltIn(template, masked, addGenerationPrompt),
        let prompt = RenderedPrompt(real: real, marked: marked, mask: mask)
      {
        return prompt
      }
    }
    return Self.plain(messages, addGenerationPrompt: addGenerationPrompt)
  }

  /// The template's text for `messages` as transformers would render it.
  func renderText(
    _ messages: [Message], tools: [ToolDeclaration] = [], addGenerationPrompt: Bool,
    switches: [String: JinjaValue] = [:], now: Date = Date()
  ) throws(JinjaError) -> String {
    guard let compiled else { throw JinjaError(kind: .unsupported, message: "no chat template", line: 0) }
    let template = try compiled.get()
    return try template.render(
      variables(messages, addGenerationPrompt, tools: tools, switches: switches), now: now)
  }

  /// Renders twice, with the real strings and with every string masked
  /// (`PromptMask`, a fresh one per render: a string cannot contain a
  /// placeholder it cannot know), and splits the real prompt where the
  /// masked one has placeholders.
  private func renderJinja(
    _ compiled: Result<JinjaTemplate, JinjaError>, _ messages: [Message], _ addGenerationPrompt: Bool,
    _ tools: [ToolDeclaration], _ switches: [String: JinjaValue], _ cancellation: JinjaCancellation?
  ) -> Result<RenderedPrompt, JinjaError> {
    do throws(JinjaError) {
      let template = try compiled.get()
      let mask = PromptMask()
      let real = try template.render(
        variables(messages, addGenerationPrompt, tools: tools, switches: switches),
        cancellation: cancellation)
      let marked = try template.render(
        variables(messages, addGenerationPrompt, tools: tools, switches: switches, text: mask.placeholder),
        cancellation: cancellation)
      guard let prompt = RenderedPrompt(real: real, marked: marked, mask: mask) else {
        return .failure(JinjaError(kind: .unsupported, message: "the template rewrites message text", line: 0))
      }
      return .success(prompt)
    } catch {
      return .failure(error)
    }
  }

  /// The variables a template sees; `text` is applied to every string the
  /// conversation brings (`PromptMask`). `switches` are the template's own
  /// options, as llama.cpp passes them (`enable_thinking`,
  /// `reasoning_effort`: `ThinkingSwitch`); a template that reads none sees none.
  func variables(
    _ messages: [Message], _ addGenerationPrompt: Bool, tools: [ToolDeclaration] = [],
    switches: [String: JinjaValue] = [:],
    text: (String) -> String = { $0 }
  ) -> [String: JinjaValue] {
    var variables: [String: JinjaValue] = [
      "messages": .array(messages.map { $0.jinjaValue(text) }),
      "tools": tools.isEmpty ? .none : .array(tools.map { $0.jinjaValue(text) }),
      "documents": .none,
      "add_generation_prompt": .bool(addGenerationPrompt),
      "bos_token": .string(bosToken),
      "eos_token": .string(eosToken),
    ]
    variables.merge(switches) { standard, _ in standard }
    return variables
  }

  /// Whether llama.cpp recognises the file's template.
  var isRecognised: Bool {
    guard let template else { return false }
    return Self.applyBuiltIn(template, [Message(role: "user", content: "x")], true) != nil
  }
  private static func applyBuiltIn(
    _ template: String, _ messages: [Message], _ addGenerationPrompt: Bool
  ) -> String? {
    let roles = messages.map { strdup($0.role) }
    let contents = messages.map { strdup($0.content) }
    defer {
      roles.forEach { free($0) }
      contents.forEach { free($0) }
    }
    var chat = zip(roles, contents).map { llama_chat_message(role: $0, content: $1) }
    let estimate = messages.reduce(256) { $0 + 2 * ($1.content.utf8.count + $1.role.utf8.count) }
    // llama.cpp takes the buffer's length as an int32.
    guard estimate <= Int(Int32.max) else { return nil }
    var buffer = [CChar](repeating: 0, count: estimate)
    var length = llama_chat_apply_template(
      template, &chat, chat.count, addGenerationPrompt, &buffer, Int32(buffer.count))
    guard length >= 0 else { return nil }
    if Int(length) > buffer.count {
      buffer = [CChar](repeating: 0, count: Int(length))
      length = llama_chat_apply_template(
        template, &chat, chat.count, addGenerationPrompt, &buffer, Int32(buffer.count))
      guard length >= 0, Int(length) <= buffer.count else { return nil }
    }
    return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  static func plain(_ messages: [Message], addGenerationPrompt: Bool = true) -> RenderedPrompt {
    var segments: [RenderedPrompt.Segment] = []
    for message in messages {
      let speaker =
        switch message.role {
        case "system": "System"
        case "user": "User"
        default: "Assistant"
        }
      segments.append(.markup("\(speaker): "))
      segments.append(.text(message.content))
      segments.append(.markup("\n"))
    }
    if addGenerationPrompt { segments.append(.markup("Assistant:")) }
    return RenderedPrompt(segments: segments)
  }
}
