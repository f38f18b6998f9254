import HybridInference

/// The transport tests that drop, stall, redirect, cancel and stream, run
/// again through URLSession (`RequestOptions.Transport.urlSession`): the
/// plain-http loopback servers otherwise only exercise the library's own
/// HTTP/1.1 client, and URLSession still carries every https request.
///
/// Each test is forwarded by name: XCTest's discovery on Linux does not
/// list the test methods a class inherits.

final class CloudStreamingURLSessionTests: CloudStreamingTests {
  override class var transport: RequestOptions.Transport { .urlSession }

  override func testFirstSnapshotArrivesBeforeTheServerSendsTheSecondEvent() async throws {
    try await super.testFirstSnapshotArrivesBeforeTheServerSendsTheSecondEvent()
  }
  override func testFixtureStreamWithAGap_deliversItsFirstEventAtOnce() async throws {
    try await super.testFixtureStreamWithAGap_deliversItsFirstEventAtOnce()
  }
  override func testResetMidStream_afterText_endsWithATypedErrorAndIsNotRetried() async throws {
    try await super.testResetMidStream_afterText_endsWithATypedErrorAndIsNotRetried()
  }
  override func testResetMidBody_unary_isNotRetried_theGenerationMayHaveRun() async throws {
    try await super.testResetMidBody_unary_isNotRetried_theGenerationMayHaveRun()
  }
  override func testResetBeforeText_afterTheRequestWasSent_isConnectionLost() async throws {
    try await super.testResetBeforeText_afterTheRequestWasSent_isConnectionLost()
  }
  override func testCancellingTheBackendsOwnStream_throws() async throws {
    try await super.testCancellingTheBackendsOwnStream_throws()
  }
  override func testCancellingASlowStream_returnsPromptlyAndTheSessionStaysUsable() async throws {
    try await super.testCancellingASlowStream_returnsPromptlyAndTheSessionStaysUsable()
  }
  override func testSessionIsUsableAfterACancelledStream() async throws {
    try await super.testSessionIsUsableAfterACancelledStream()
  }
}

final class CloudRetryURLSessionTests: CloudRetryTests {
  override class var transport: RequestOptions.Transport { .urlSession }

  override func test429WithRetryInfo_waitsAtLeastTheServersDelayThenSucceeds() async throws {
    try await super.test429WithRetryInfo_waitsAtLeastTheServersDelayThenSucceeds()
  }
  override func test429_retriedUpToMaxAttemptsThenThrown() async throws {
    try await super.test429_retriedUpToMaxAttemptsThenThrown()
  }
  override func test500ThenSuccess_andStreamed503ThenSuccess() async throws {
    try await super.test500ThenSuccess_andStreamed503ThenSuccess()
  }
  override func testPerDayQuota429_isNotRetried() async throws { try await super.testPerDayQuota429_isNotRetried() }
  override func test400_isNotRetried() async throws { try await super.test400_isNotRetried() }
  override func testResetOrCloseAfterTheRequestWasRead_isNotRetriedForAGeneration() async throws {
    try await super.testResetOrCloseAfterTheRequestWasRead_isNotRetriedForAGeneration()
  }
  override func testResetAfterTheRequestWasRead_isRetriedForCountTokens() async throws {
    try await super.testResetAfterTheRequestWasRead_isRetriedForCountTokens()
  }
  override func testRetryPolicyNone_reportsTheFirstFailure() async throws {
    try await super.testRetryPolicyNone_reportsTheFirstFailure()
  }
  override func testARetryThatWouldPassTheTimeout_isNotAttempted() async throws {
    try await super.testARetryThatWouldPassTheTimeout_isNotAttempted()
  }
  override func testStreamIsNotRetriedAfterTextWasDelivered() async throws {
    try await super.testStreamIsNotRetriedAfterTextWasDelivered()
  }
}

final class CloudSlowIsNotOfflineURLSessionTests: CloudSlowIsNotOfflineTests {
  override class var transport: RequestOptions.Transport { .urlSession }

  override func testServerThatAcceptsAndNeverAnswers_isTimedOutNotOffline() async throws {
    try await super.testServerThatAcceptsAndNeverAnswers_isTimedOutNotOffline()
  }
  override func testPreferCloud_stalledServer_throwsTimedOutAndNeverAsksTheDevice() async throws {
    try await super.testPreferCloud_stalledServer_throwsTimedOutAndNeverAsksTheDevice()
  }
  override func testResetAfterTheRequestWasSent_isConnectionLostNotOffline() async throws {
    try await super.testResetAfterTheRequestWasSent_isConnectionLostNotOffline()
  }
  override func testFailedTLSHandshake_isOffline() async throws { try await super.testFailedTLSHandshake_isOffline() }
}

final class CloudRedirectURLSessionTests: CloudRedirectTests {
  override class var transport: RequestOptions.Transport { .urlSession }

  override func testRedirect307And308ToAnotherPort_isRefusedAndNothingArrivesThere() async throws {
    try await super.testRedirect307And308ToAnotherPort_isRefusedAndNothingArrivesThere()
  }
  override func testPreferCloud_crossOriginRedirect_isThrownNotAFallback() async throws {
    try await super.testPreferCloud_crossOriginRedirect_isThrownNotAFallback()
  }
  override func testSameOriginRedirect_isFollowedWithTheKey() async throws {
    try await super.testSameOriginRedirect_isFollowedWithTheKey()
  }
  override func testPlainHTTPToAnotherMachine_isRefusedBeforeAnythingIsSent() async throws {
    try await super.testPlainHTTPToAnotherMachine_isRefusedBeforeAnythingIsSent()
  }
  override func testPlainHTTPToThisMachine_isAllowed() async throws {
    try await super.testPlainHTTPToThisMachine_isAllowed()
  }
}

final class CloudOfflineURLSessionTests: CloudOfflineTests {
  override class var transport: RequestOptions.Transport { .urlSession }

  override func testClosedLoopbackPort_isOfflineAndNotRetried() async throws {
    try await super.testClosedLoopbackPort_isOfflineAndNotRetried()
  }
  override func testUnresolvableHost_isOffline() async throws { try await super.testUnresolvableHost_isOffline() }
  override func testHTTPStatusIsNeverOffline() async throws { try await super.testHTTPStatusIsNeverOffline() }
  override func testPreferCloud_closedPort_fallsBackToTheLocalModelAndLogsIt() async throws {
    try await super.testPreferCloud_closedPort_fallsBackToTheLocalModelAndLogsIt()
  }
  override func testPreferCloud_unresolvableHost_fallsBack() async throws {
    try await super.testPreferCloud_unresolvableHost_fallsBack()
  }
  override func testPreferCloud_connectTimeout_fallsBack() async throws {
    try await super.testPreferCloud_connectTimeout_fallsBack()
  }
  override func testPreferCloud_500And400_doNotFallBack() async throws {
    try await super.testPreferCloud_500And400_doNotFallBack()
  }
  override func testPreferCloud_cloudAnswers_localIsNotAsked() async throws {
    try await super.testPreferCloud_cloudAnswers_localIsNotAsked()
  }
}
