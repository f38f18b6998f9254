import HybridInferenceCore

/// What the device does with media: it reads text only.
///
/// The request's new prompt with an attachment is `unsupportedRequest`
/// (checked before the model loads), so a prefer-on-device hybrid hands the
/// request, attachment and all, to the cloud. Attachments of earlier turns
/// are read as a short placeholder instead (`[image: image/jpeg, 12 KB]`), so
/// one picture early in a chat does not send every later turn to the cloud,
/// and the model still knows something was shown.
///
/// Image bytes the device is to decode go through ``ImageCheck`` first,
/// before any decoder sees them.
enum DeviceMedia {
  /// Throws `unsupportedRequest` when the request's new prompt (the last user
  /// turn that is not tool outputs) has inline data or a file.
  static func checkNewPrompt(of transcript: Transcript) throws(HybridInferenceError) {
    guard let index = newPromptIndex(of: transcript) else { return }
    let media = transcript.entries[index].content.parts.compactMap(mediaType)
    guard let first = media.first else { return }
    throw .unsupportedRequest(
      "the on-device model reads text only; the prompt has \(media.count) attachment(s) (\(first)"
        + (media.count > 1 ? ", ..." : "") + ")")
  }

  /// The index of the request's new prompt: the last user turn that is not
  /// the outputs of a tool round.
  static func newPromptIndex(of transcript: Transcript) -> Int? {
    transcript.entries.lastIndex { $0.role == .user && $0.toolOutputs.isEmpty }
  }

  /// The text the device reads for `entry`: its answer text (thoughts left
  /// out), each attachment as its placeholder where it stands, on a line of
  /// its own. Exactly `entry.text` for a turn without media.
  static func text(of entry: Transcript.Entry) -> String {
    guard entry.content.parts.contains(where: { mediaType($0) != nil }) else { return entry.text }
    var segments: [String] = []
    var run = ""
    for part in entry.content.parts where part.thought != true {
      if let placeholder = placeholder(for: part) {
        if !run.isEmpty { segments.append(run) }
        run = ""
        segments.append(placeholder)
      } else if let text = part.text {
        run += text
      }
    }
    if !run.isEmpty { segments.append(run) }
    return segments.joined(separator: "\n")
  }

  /// `[image: image/jpeg, 12 KB]` for inline bytes, `[file: video/mp4]` for
  /// a URI; nil for a part without media.
  static func placeholder(for part: Part) -> String? {
    if let blob = part.inlineData {
      return "[\(kind(of: blob.mimeType)): \(shown(blob.mimeType)), \(size(blob.data.count))]"
    }
    if let file = part.fileData { return "[file: \(shown(file.mimeType ?? ""))]" }
    return nil
  }

  /// The media type of a part with media, for messages; nil otherwise.
  private static func mediaType(_ part: Part) -> String? {
    if let blob = part.inlineData { return shown(blob.mimeType) }
    if let file = part.fileData { return shown(file.mimeType ?? "") }
    return nil
  }

  /// The type as written when it is well formed, else a neutral word: a
  /// hand-built transcript can hold any string there.
  private static func shown(_ mimeType: String) -> String {
    MediaType.isWellFormed(mimeType) ? mimeType : "unknown type"
  }

  private static func kind(of mimeType: String) -> String {
    let lowered = mimeType.lowercased()
    for kind in ["image", "audio", "video"] where lowered.hasPrefix(kind + "/") { return kind }
    return "attachment"
  }

  /// `512 bytes`, `12 KB`, `3.4 MB` (decimal units, rounded).
  static func size(_ count: Int) -> String {
    if count == 1 { return "1 byte" }
    if count < 1000 { return "\(count) bytes" }
    if count < 1_000_000 { return "\(count / 1000 + (count % 1000 >= 500 ? 1 : 0)) KB" }
    let tenths = count / 100_000 + (count % 100_000 >= 50_000 ? 1 : 0)
    return "\(tenths / 10).\(tenths % 10) MB"
  }
}
