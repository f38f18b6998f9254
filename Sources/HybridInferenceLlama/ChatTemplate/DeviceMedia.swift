import Foundation
import HybridInferenceCore

/// What the device does with media.
///
/// A model without a projector reads text only: the request's new prompt
/// with an attachment is `unsupportedRequest` (checked before the model
/// loads), so a prefer-on-device hybrid hands the request, attachment and
/// all, to the cloud. A model with a projector that reads images
/// (`LocalSystemModel(modelPath:projectorPath:)`) reads the inline JPEG,
/// PNG, GIF and BMP images of the user's turns itself: each becomes the
/// projector's marker where it stands in its turn (``Reading/images(marker:)``),
/// and libmtmd puts the image's embeddings there, so a follow-up question
/// still sees the picture. Anything else in the new prompt (a file URI,
/// sound, video, WebP) stays `unsupportedRequest`.
///
/// Other attachments of earlier turns (and, on a model without a projector,
/// all of them; an earlier image its check refuses; the model's own) are
/// read as a short placeholder instead (`[image: image/jpeg, 12 KB]`), so
/// one of them early in a chat does not send every later turn to the cloud,
/// and the model still knows something was shown.
///
/// Image bytes the device is to decode go through ``ImageCheck`` first,
/// before any decoder sees them (`DecodedImage`).
enum DeviceMedia {
  /// What the device reads in the new prompt besides text.
  enum Reading: Equatable, Sendable {
    /// Text only: any attachment is `unsupportedRequest`.
    case textOnly
    /// Inline images of the formats ``ImageFormat`` names, each standing in
    /// the text as `marker`.
    case images(marker: String)
  }

  /// Throws `unsupportedRequest` when the request's new prompt (the last user
  /// turn that is not tool outputs) has media the device does not read.
  static func checkNewPrompt(of transcript: Transcript, reading: Reading = .textOnly) throws(HybridInferenceError) {
    guard let index = newPromptIndex(of: transcript) else { return }
    let parts = transcript.entries[index].content.parts
    if case .images = reading {
      guard let refused = parts.first(where: { mediaType($0) != nil && image(in: $0) == nil }) else { return }
      throw .unsupportedRequest(
        "the on-device model reads inline JPEG, PNG, GIF and BMP images; the prompt has "
          + (refused.fileData != nil ? "a file (\(mediaType(refused) ?? ""))" : "\(mediaType(refused) ?? "")"))
    }
    let media = parts.compactMap(mediaType)
    guard let first = media.first else { return }
    throw .unsupportedRequest(
      "the on-device model reads text only; the prompt has \(media.count) attachment(s) (\(first)"
        + (media.count > 1 ? ", ..." : "") + ")")
  }

  /// The inline images of the request's new prompt, in the order the
  /// prompt gives them.
  static func images(inNewPromptOf transcript: Transcript) -> [Part.Blob] {
    guard let index = newPromptIndex(of: transcript) else { return [] }
    return transcript.entries[index].content.parts.compactMap(image)
  }

  /// The images a model that reads them reads in `transcript`, in the order
  /// their markers stand in the rendered prompt: turn by turn, each turn's
  /// in its order (``image(in:of:newPrompt:)``).
  static func images(readIn transcript: Transcript) -> [Part.Blob] {
    let newPrompt = newPromptIndex(of: transcript)
    return transcript.entries.enumerated().flatMap { index, entry in
      entry.content.parts.compactMap { image(in: $0, of: entry, newPrompt: index == newPrompt) }
    }
  }

  /// The part's bytes when a model that reads images reads it as one: an
  /// inline image of a format the device reads, in a user's turn; of an
  /// earlier turn only when ``ImageCheck`` takes it (a refused one there is a
  /// placeholder, so it does not fail every later turn; in the new prompt its
  /// error is the request's).
  static func image(in part: Part, of entry: Transcript.Entry, newPrompt: Bool) -> Part.Blob? {
    guard entry.role == .user, let blob = image(in: part) else { return nil }
    if newPrompt { return blob }
    return (try? ImageCheck.check(blob.data, mimeType: blob.mimeType)) == nil ? nil : blob
  }

  /// The part's bytes when it is an inline image of a format the device reads.
  private static func image(in part: Part) -> Part.Blob? {
    guard part.thought != true, let blob = part.inlineData, ImageFormat(mimeType: blob.mimeType) != nil else {
      return nil
    }
    return blob
  }

  /// The index of the request's new prompt: the last user turn that is not
  /// the outputs of a tool round.
  static func newPromptIndex(of transcript: Transcript) -> Int? {
    transcript.entries.lastIndex { $0.role == .user && $0.toolOutputs.isEmpty }
  }

  /// The text the device reads for `entry`: its answer text (thoughts left
  /// out), each attachment as its placeholder where it stands, on a line of
  /// its own; with `marker` (a model that reads images), each image it reads
  /// (``image(in:of:newPrompt:)``) as the marker instead. Exactly
  /// `entry.text` for a turn without media.
  static func text(of entry: Transcript.Entry, marker: String? = nil, newPrompt: Bool = false) -> String {
    guard entry.content.parts.contains(where: { mediaType($0) != nil }) else { return entry.text }
    var segments: [String] = []
    var run = ""
    for part in entry.content.parts where part.thought != true {
      let read = marker.flatMap { marker in image(in: part, of: entry, newPrompt: newPrompt).map { _ in marker } }
      if let stands = read ?? placeholder(for: part) {
        if !run.isEmpty { segments.append(run) }
        run = ""
        segments.append(stands)
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
