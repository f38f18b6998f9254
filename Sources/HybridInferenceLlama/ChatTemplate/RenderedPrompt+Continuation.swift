extension RenderedPrompt {
  /// This prompt, rendered with `partial` as the conversation's last
  /// (assistant) message and no generation prompt, cut right after that
  /// message's text: the template's continue-final-message form, in which
  /// the model goes on with its own turn instead of starting one.
  ///
  /// The cut drops the template's end-of-turn markup (`<|im_end|>\n`) and
  /// keeps everything before, so the prompt is byte for byte the one the
  /// model would have been in had it written `partial` itself. A template
  /// that printed the message trimmed (`| trim`) gets the trimmed whitespace
  /// back: the continuation follows `partial` exactly. Nil when the last
  /// text segment is not `partial` in either form (a template that rewrites
  /// or drops the last assistant message).
  func continuing(_ partial: String) -> RenderedPrompt? {
    guard let index = segments.lastIndex(where: { if case .text = $0 { true } else { false } }),
      case .text(let printed) = segments[index]
    else { return nil }
    guard printed == partial || (!printed.isEmpty && partial.trimmingWhitespace == printed) else { return nil }
    return RenderedPrompt(segments: Array(segments[..<index]) + [.text(partial)])
  }
}
