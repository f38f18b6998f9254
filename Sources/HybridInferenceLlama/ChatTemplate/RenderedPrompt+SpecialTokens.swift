extension RenderedPrompt {
  /// This prompt without the BOS the template printed at its start (`bos`)
  /// and the EOS it printed at its end (`eos`), for a vocabulary whose
  /// tokenizer adds them itself: a template that writes `{{ bos_token }}`
  /// (Llama 3.x, the DeepSeek distills) must not give a prompt two BOS.
  ///
  /// llama.cpp's own chat rendering does the same (`common_chat_templates_apply`
  /// drops one leading `bos_token` when the vocabulary adds BOS, one trailing
  /// `eos_token` when it adds EOS), so a prompt here is llama-server's token
  /// for token. Only the template's markup is cut: a message that begins with
  /// BOS's text stays text. Nil or empty leaves that end as it is. Bytes are
  /// compared, as llama.cpp compares them, not characters.
  func leavingToTokenizer(bos: String?, eos: String?) -> RenderedPrompt {
    var segments = segments
    if let bos, !bos.isEmpty, case .markup(let text)? = segments.first, text.utf8.starts(with: bos.utf8) {
      segments[0] = .markup(String(decoding: text.utf8.dropFirst(bos.utf8.count), as: UTF8.self))
    }
    if let eos, !eos.isEmpty, case .markup(let text)? = segments.last,
      text.utf8.reversed().starts(with: eos.utf8.reversed())
    {
      segments[segments.count - 1] = .markup(String(decoding: text.utf8.dropLast(eos.utf8.count), as: UTF8.self))
    }
    return RenderedPrompt(segments: segments.filter { $0 != .markup("") })
  }
}
