// Message type bytes and the other magic numbers of protocol 3.0, named as the Postgres docs
// name them. Plain `as const` objects rather than enums: they erase cleanly under
// verbatimModuleSyntax and still read as `case BackendCode.DataRow:` in a switch.

/** Type bytes of messages a client (frontend) sends. */
export const FrontendCode = {
  Bind: 0x42, // 'B'
  Close: 0x43, // 'C'
  CopyData: 0x64, // 'd'
  CopyDone: 0x63, // 'c'
  CopyFail: 0x66, // 'f'
  Describe: 0x44, // 'D'
  Execute: 0x45, // 'E'
  Flush: 0x48, // 'H'
  FunctionCall: 0x46, // 'F'
  Parse: 0x50, // 'P'
  /** PasswordMessage, SASLInitialResponse, SASLResponse, GSSResponse share 'p'; context decides. */
  PasswordMessage: 0x70, // 'p'
  Query: 0x51, // 'Q'
  Sync: 0x53, // 'S'
  Terminate: 0x58, // 'X'
} as const;
export type FrontendCode = (typeof FrontendCode)[keyof typeof FrontendCode];

/** Type bytes of messages a server (backend) sends. */
export const BackendCode = {
  Authentication: 0x52, // 'R'
  BackendKeyData: 0x4b, // 'K'
  BindComplete: 0x32, // '2'
  CloseComplete: 0x33, // '3'
  CommandComplete: 0x43, // 'C'
  CopyBothResponse: 0x57, // 'W'
  CopyData: 0x64, // 'd'
  CopyDone: 0x63, // 'c'
  CopyInResponse: 0x47, // 'G'
  CopyOutResponse: 0x48, // 'H'
  DataRow: 0x44, // 'D'
  EmptyQueryResponse: 0x49, // 'I'
  ErrorResponse: 0x45, // 'E'
  FunctionCallResponse: 0x56, // 'V'
  NegotiateProtocolVersion: 0x76, // 'v'
  NoData: 0x6e, // 'n'
  NoticeResponse: 0x4e, // 'N'
  NotificationResponse: 0x41, // 'A'
  ParameterDescription: 0x74, // 't'
  ParameterStatus: 0x53, // 'S'
  ParseComplete: 0x31, // '1'
  PortalSuspended: 0x73, // 's'
  ReadyForQuery: 0x5a, // 'Z'
  RowDescription: 0x54, // 'T'
} as const;
export type BackendCode = (typeof BackendCode)[keyof typeof BackendCode];

/** The int32 that opens an untyped startup-phase packet. */
export const StartupCode = {
  /** Protocol 3.0: major 3 in the high 16 bits, minor 0 in the low. */
  Protocol3: 196608,
  CancelRequest: 80877102,
  SSLRequest: 80877103,
  GSSENCRequest: 80877104,
} as const;

/** Authentication request subtypes (the int32 after 'R'). */
export const AuthCode = {
  Ok: 0,
  KerberosV5: 2,
  CleartextPassword: 3,
  MD5Password: 5,
  GSS: 7,
  GSSContinue: 8,
  SSPI: 9,
  SASL: 10,
  SASLContinue: 11,
  SASLFinal: 12,
} as const;
export type AuthCode = (typeof AuthCode)[keyof typeof AuthCode];

/** ReadyForQuery transaction status: idle, in a transaction block, in a failed block. */
export type TransactionStatus = 'I' | 'T' | 'E';

/** Format codes of parameters, result columns and COPY. */
export const FormatCode = { Text: 0, Binary: 1 } as const;
