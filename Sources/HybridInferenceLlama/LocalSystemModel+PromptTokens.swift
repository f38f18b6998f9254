import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// The prompt a request becomes on device, and what it costs in tokens: the
/// one rendering that generation and `promptTokenCount(for:)` share, so that
/// a count is exactly what a request would prefill.
extension LocalSystemModel {
  /// A request as the model reads it.
  struct DevicePrompt {
    /// The tool plan, when the request offers tools.
    let tools: LocalToolPlan?
    /// The messages the template rendered.
    let messages: [ChatTemplate.Message]
    /// The tools as the template declares them.
    let templateTools: [ToolDeclaration]
    /// The rendered prompt.
    let rendered: RenderedPrompt
    /// The rendered prompt's tokens.
    let tokens: [llama_token]
    /// How the answer's thought block reads, when the template declares one
    /// (`ThoughtSyntax.declared(in:)`): opened already when the rendered
    /// prompt ends with its start tag.
    let thoughts: ThoughtSplitter?
  }

  /// Renders and tokenizes `request` (instructions, tools, every turn and the
  /// schema's prompt); runs on the template thread.
  static func prompt(
    of request: ModelRequest, model: LlamaModel, allowsGenericToolFormat: Bool,
    reading: DeviceMedia.Reading = .textOnly, cancellation: JinjaCancellation
  ) throws -> DevicePrompt {
    let tools = try LocalToolPlan(
      request: request, template: model.template, allowsGenericFormat: allowsGenericToolFormat, reading: reading)
    var messages = try tools?.messages ?? ChatTemplate.messages(of: request.transcript, reading: reading)
    if let schema = request.responseSchema { try SchemaPrompt.attach(schema, to: &messages) }
    let templateTools = tools?.templateTools ?? []
    // A grammar that holds from the first token (a schema, a forced call)
    // leaves no room for a thought block: the prompt closes it.
    let forced = request.responseSchema != nil || (tools?.grammar != nil && tools?.isLazy == false)
    let thinking = ThinkingSwitch(
      template: model.template.template, reasoning: forced ? .off : request.options.foundationModels?.reasoning)
    var rendered: RenderedPrompt
    if let partial = request.continuedAnswer {
      // Another model's answer broke off: go on with it as this model's own turn.
      messages.append(ChatTemplate.Message(role: "assistant", content: partial))
      let whole = model.template.render(
        messages, tools: templateTools, addGenerationPrompt: false, log: request.logHandler,
        cancellation: cancellation)
      guard let continued = whole.continuing(partial) else {
        throw HybridInferenceError.unsupportedRequest(
          "the chat template does not print the answer to continue as it was written")
      }
      rendered = continued
    } else {
      rendered = model.template.render(
        messages, tools: templateTools, switches: thinking.variables, log: request.logHandler,
        cancellation: cancellation)
      thinking.closeBlock(in: &rendered)
    }
    let thoughts =
      forced
      ? nil
      : thinking.syntax.map { syntax in ThoughtSplitter(syntax: syntax, opened: syntax.isOpened(by: rendered.text)) }
    return DevicePrompt(
      tools: tools, messages: messages, templateTools: templateTools, rendered: rendered,
      tokens: try model.tokenize(rendered),
      thoughts: thoughts)
  }

  /// The tokens `request` would prefill: its rendered prompt, exactly as
  /// generation renders it, each image the model reads counted as the
  /// positions its embeddings take. Loads
  /// the model if needed. The library counts with it when it trims a
  /// transcript that does not fit the window (`ContextOverflow.dropOldestTurns`).
  public func promptTokenCount(for request: ModelRequest) async throws -> Int? {
    guard location.hasProjector, !DeviceMedia.images(readIn: request.transcript).isEmpty else {
      return try await promptTokens(for: request).count
    }
    try validateSettings()
    try DeviceMedia.checkNewPrompt(of: request.transcript, reading: mediaBeforeLoad)
    let model = try await loadedModel(progress: nil)
    let (found, images) = try await projector(reading: request.transcript, model: model)
    guard let projector = found else { return try await promptTokens(for: request).count }
    let allowsGenericToolFormat = allowsGenericToolFormat
    return try await TemplateThread.run { cancellation in
      let rendered = try Self.prompt(
        of: request, model: model, allowsGenericToolFormat: allowsGenericToolFormat,
        reading: .images(marker: projector.marker), cancellation: cancellation)
      return try Self.mediaChunks(of: rendered.rendered, images: images, model: model, projector: projector)
        .positionCount
    }
  }

  /// The token ids `request` would prefill, exactly as generation renders
  /// them: for a benchmark that sends llama-server what the sessions here read.
  package func promptTokens(for request: ModelRequest) async throws -> [Int32] {
    try validateSettings()
    let model = try await loadedModel(progress: nil)
    let allowsGenericToolFormat = allowsGenericToolFormat
    return try await TemplateThread.run { cancellation in
      try Self.prompt(
        of: request, model: model, allowsGenericToolFormat: allowsGenericToolFormat, cancellation: cancellation
      ).tokens
    }
  }
}
