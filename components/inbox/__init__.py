"""The Inbox page's widgets (dashboard/views/inbox.py): what needs the person signed in, from the journal
(dailies/journal/inbox.py), and its unread count in the navigation."""
