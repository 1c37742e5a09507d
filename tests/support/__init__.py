"""What tests and benchmark scripts share: a served gateway, free ports, synthesised speech, the
page's protocol client. Scripts import from here and never from test modules."""
