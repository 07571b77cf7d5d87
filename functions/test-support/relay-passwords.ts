// Relay passwords for the tests that no secret reaches an output (the worker's transport, the launch check).
/**
 * Relay passwords as providers issue them (Amazon SES's hold / + =), each with the characters a URL gives a
 * meaning: / + # @ = : % ?. Their pieces between those characters are distinctive, so finding any piece in an
 * output finds a leak.
 */
export const PASSWORDS = [
  'BKx9/Qm7pa+Wr4k=',
  'Zq7x#Tn2mVb8j',
  'Hy6c@Lp3dKs9f',
  'Rt5v:Gw8nMe2q',
  'Jd4s%Ux7bNa3h',
  'Fo2k?Ci9pYr6t',
  'Vb8j/Tn2m#Zq7x@Wr4k',
  'Pe3w=Sd6gAz1x+',
  'Kl9m%2FQo5t%zz',
  'Xc4v/Bn7m:Lk1j?Ih5g',
  'Qa2z+Ws3x/Ed4c=',
  'Mu8y@@Nh7t##',
];

/** The distinctive pieces of a password: finding any of them in an output finds a leak. */
export const passwordPieces = (password: string) =>
  password.split(/[/+#@=:%?]/).filter((piece) => piece.length >= 4);
