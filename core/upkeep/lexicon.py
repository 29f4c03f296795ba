"""The words the detail comparison (``details.py``) knows: which carry no detail, which do, and everyday synonyms.

Written by hand for Engram (no word list of another project). Every entry is lower case. A word missing here is
read as a content word: compared, not ignored, which can only keep two texts apart (the safe side).
"""

from __future__ import annotations

#: Words that carry no detail of their own: articles, pronouns, most prepositions and conjunctions, auxiliaries,
#: fillers and intensifiers. Prepositions of direction and time (to, from, before, after, until, in, out, up,
#: down, over, under, with, …) are not here: "from staging" and "to staging" are different facts.
NEUTRAL = frozenset("""
a an the this that these those such
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves who whom whose which what whatever one's
of at for about as via per through across around among amongst during within upon by regarding concerning
toward towards
and or but although though because cause cuz so yet while whereas if when whenever where wherever whether then
than also too plus thus hence therefore however moreover furthermore besides anyway anyways meanwhile otherwise
be is am are was were been being do does did doing have has had having will would shall 's 'd
basically just really actually honestly literally simply truly indeed oh ah ahh aw well hey hi hello yo please
pls plz fyi btw ps note nb reminder remember ok okay alright um uh hmm er quite very rather pretty totally
absolutely completely entirely fully now currently still already again here there reminder heads fwiw imo imho
tbh lol haha hehe wow yay ugh e.g i.e etc anyhow kindly gently surely sure
""".split())

#: Words that turn a statement around when added or swapped. Each counts as a detail even on one side only:
#: "Caching is enabled" and "Caching is not enabled" are different facts.
NEGATION = frozenset("""
not no never none nothing nobody noone nowhere neither nor without cannot nope non off disabled disable disables
disabling unless except excluding only false forbidden forbid forbids prohibited prohibit banned disallowed
denied deny denies refused reject rejected
""".split())

#: The words of time that are details: months, weekdays, days and parts of the day, frequencies, seasons.
MONTHS = {
    "january": "january", "jan": "january", "february": "february", "feb": "february", "march": "march",
    "april": "april", "apr": "april", "may": "may", "june": "june", "jun": "june", "july": "july", "jul": "july",
    "august": "august", "aug": "august", "september": "september", "sep": "september", "sept": "september",
    "october": "october", "oct": "october", "november": "november", "nov": "november", "december": "december",
    "dec": "december",
}
#: Months that are also everyday words in lower case ("we may", "march on", "august company"): months only when
#: capitalised.
MONTH_WORDS = frozenset({"may", "march", "august"})
WEEKDAYS = {
    "monday": "monday", "mon": "monday", "tuesday": "tuesday", "tue": "tuesday", "tues": "tuesday",
    "wednesday": "wednesday", "wed": "wednesday", "thursday": "thursday", "thu": "thursday", "thur": "thursday",
    "thurs": "thursday", "friday": "friday", "fri": "friday", "saturday": "saturday", "sunday": "sunday",
}
TIME_WORDS = frozenset("""
today tomorrow yesterday tonight weekend weekday morning afternoon evening night noon midnight midday dawn dusk
daily nightly weekly biweekly fortnightly monthly quarterly yearly annually hourly semiannually bimonthly
summer autumn winter am pm a.m p.m
""".split())
#: Units, singular (a plural or an abbreviation is read as its unit): "30 days" and "30 minutes" differ.
UNITS = {
    **{u: u for u in ("second", "minute", "hour", "day", "week", "month", "year", "decade", "century",
                      "millisecond", "microsecond", "nanosecond", "byte", "bit", "kilobyte", "megabyte", "gigabyte",
                      "terabyte", "percent", "degree", "meter", "kilometer", "centimeter", "millimeter", "mile",
                      "foot", "inch", "yard", "kilogram", "gram", "pound", "ounce", "liter", "milliliter", "gallon",
                      "dollar", "euro", "cent", "yen", "core", "thread", "node", "replica", "shard", "user", "seat",
                      "request", "token", "step", "page", "item", "row", "column", "retry", "attempt", "time")},
    "sec": "second", "secs": "second", "s": "second", "min": "minute", "mins": "minute", "hr": "hour",
    "hrs": "hour", "h": "hour", "ms": "millisecond", "us": "microsecond", "ns": "nanosecond", "yr": "year",
    "yrs": "year", "wk": "week", "wks": "week", "b": "byte", "kb": "kilobyte", "mb": "megabyte",
    "gb": "gigabyte", "tb": "terabyte", "kib": "kilobyte", "mib": "megabyte", "gib": "gigabyte", "tib": "terabyte",
    "k": "thousand", "m": "million", "bn": "billion", "%": "percent", "pct": "percent", "km": "kilometer",
    "cm": "centimeter", "mm": "millimeter", "ft": "foot", "feet": "foot", "in.": "inch", "kg": "kilogram",
    "g": "gram", "lb": "pound", "lbs": "pound", "oz": "ounce", "l": "liter", "ml": "milliliter",
    "usd": "dollar", "bucks": "dollar", "eur": "euro", "metre": "meter", "metres": "meter", "kilometre": "kilometer",
    "litre": "liter", "litres": "liter", "°c": "degree", "°f": "degree", "celsius": "degree",
    "fahrenheit": "degree", "x": "times",
}
#: Number words read as digits ("thirty days" is "30 days"); ``combine_numbers`` adds up a run of them.
NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12,
}
NUMBER_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
ORDINALS = {
    "first": "1st", "third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th", "seventh": "7th",
    "eighth": "8th", "ninth": "9th", "tenth": "10th", "eleventh": "11th", "twelfth": "12th", "once": "1x",
    "twice": "2x", "thrice": "3x", "half": "0.5", "single": "1", "double": "2x", "triple": "3x", "quarter": "0.25",
    "last": "last", "final": "last",
}
#: Upper-case words that are ordinary words, not identifiers.
PLAIN_CAPITALS = frozenset("ok fyi asap todo note nb ps tl;dr tldr am pm btw imo imho fwiw faq eta aka rip lol omg "
                           "i".split())
#: Everyday words that, written in capitals in a text that is not all capitals, are mostly acronyms ("IT owns the
#: laptops", "the US office"): they stay identifiers there.
ACRONYM_WORDS = frozenset({"it", "us"})
#: Tokens of a shortened word that stand for the whole (compared as the whole): "db" is "database".
ABBREVIATIONS = {
    "db": "database", "dbs": "database", "prod": "production", "config": "configuration", "configs": "configuration",
    "repo": "repository", "repos": "repository", "docs": "documentation", "doc": "documentation", "info": "information",
    "approx": "approximately", "env": "environment", "envs": "environment", "dev": "development", "pic": "picture",
    "pics": "picture", "photo": "photograph", "photos": "photograph", "app": "application", "apps": "application",
    "admin": "administrator", "admins": "administrator", "auth": "authentication", "min.": "minimum",
    "max.": "maximum", "dept": "department", "mgr": "manager", "appt": "appointment", "tmrw": "tomorrow",
    "tmr": "tomorrow", "thx": "thanks", "pls": "please", "u": "you", "ur": "your", "govt": "government",
    "colour": "color", "favourite": "favorite", "organise": "organize", "organised": "organized", "centre": "center",
    "behaviour": "behavior", "licence": "license", "cancelled": "canceled", "travelling": "traveling",
    "analyse": "analyze", "grey": "gray", "programme": "program", "catalogue": "catalog", "theatre": "theater",
    "kinda": "kind", "sorta": "sort", "gonna": "going", "wanna": "want", "gotta": "got", "lemme": "let",
}
#: Relative words that make a time another time: "next Wednesday" is not "this Wednesday" (a detail when a time word
#: follows them).
RELATIVE_TIME = frozenset("next last previous following coming upcoming past this".split())
#: Phrases with a negation word that negate nothing of the fact ("don't worry", "no worries"): read as fillers.
IDIOMS: tuple[tuple[str, ...], ...] = (
    ("do", "not", "worry"), ("no", "worries"), ("no", "worry"), ("no", "problem"), ("no", "rush"),
    ("no", "pressure"), ("not", "a", "problem"), ("never", "mind"), ("no", "doubt"),
)
#: Words with which a note says it changes what was true before ("moved to", "from now on", "switched", "no
#: longer"): such a note is a possible update of a less alike one (``duplicates.CUED_SIMILARITY``).
UPDATE_CUES = frozenset("""
now moved move moving changed change changes switched switch switching migrated migrate migrating replaced replace
replacing instead anymore longer update updated updating went became become becomes starting correction corrected
renamed rename upgraded upgrade downgraded bumped raised lowered increased decreased reduced extended postponed
rescheduled cancelled canceled handed transferred retired deprecated dropped actually turns after-all revised
""".split())
#: Phrases read as what they stand for: a time span written in words as its number and unit, a few set phrases as
#: the one word they mean.
SPANS = {("half", "an", "hour"): ("30", "minute"), ("half", "a", "day"): ("12", "hour"),
         ("a", "quarter", "of", "an", "hour"): ("15", "minute"), ("an", "hour", "and", "a", "half"): ("90", "minute"),
         ("at", "last"): ("finally",)}

#: Everyday synonyms: words of one group stand for each other without changing a detail. Antonyms and words of
#: one kind that name different things (staging and production, tea and coffee) are never in one group.
SYNONYM_GROUPS: tuple[frozenset[str], ...] = tuple(frozenset(g.split()) for g in """
big large huge enormous massive sizable
small little tiny
fast quick rapid speedy swift quickly rapidly fastest quickest
slow sluggish
begin start commence kick
finish complete end wrap conclude
fix repair mend patch resolve
use utilize utilise employ
help assist aid support
need require
want wish desire
think believe reckon suppose guess
say tell mention state note
ask request
show display
get obtain receive fetch acquire
buy purchase
make create build produce generate
check verify confirm validate ensure inspect
look see view watch
choose chose chosen pick picked select selected opt
keep retain preserve hold store
stop halt cease quit
try attempt
change modify alter adjust update tweak
remove delete drop erase
add include append insert
allow permit let enable
go head
return come
move shift transfer relocate migrate
call phone ring
send ship deliver dispatch
happy glad pleased delighted
sad unhappy upset
tired exhausted worn
great awesome fantastic terrific excellent superb wonderful amazing incredible brilliant
good fine decent nice solid
bad poor awful terrible
nice lovely pleasant
hard difficult tough challenging rough
easy simple straightforward effortless plain basic
important significant crucial key essential vital critical
main primary principal chief
often frequently regularly routinely
usually generally normally typically ordinarily commonly
sometimes occasionally
soon shortly
maybe perhaps possibly
definitely certainly surely absolutely
probably likely
right correct accurate
wrong incorrect mistaken
problem issue trouble bug glitch
error failure fault
mistake error
idea thought notion
plan scheme strategy
job task chore duty
work labor labour
team group squad crew
boss manager lead supervisor
friend pal buddy mate
kids children
mom mother mum mommy
dad father daddy
car vehicle auto
house home
shop store
photo picture pic photograph image
trip journey voyage
story tale
talk chat speak converse discuss
meeting meetup sync call
doctor physician doc
sick ill unwell
scared afraid frightened
angry mad furious annoyed
funny hilarious amusing
smart clever intelligent bright
rich wealthy
cheap inexpensive affordable
expensive costly pricey
stuff things
lots plenty loads many numerous
enough sufficient adequate
whole entire full complete
every each
also additionally
recently lately
finally eventually ultimately
especially particularly notably
mostly largely mainly primarily chiefly
nearly almost practically virtually
exactly precisely
quietly silently
carefully cautiously
immediately instantly promptly right-away
later afterwards afterward subsequently
thanks thank thx cheers gracias
hi hello hey greetings
bye goodbye farewell
yes yeah yep yup sure aye
okay ok alright fine
cool neat nice
enabled enable on active activated
excited thrilled eager
love adore
like enjoy
hate detest loathe dislike
fun enjoyable entertaining
beautiful gorgeous pretty lovely stunning
wonderful lovely delightful marvelous marvellous
interesting fascinating intriguing
extremely incredibly exceptionally
passionate enthusiastic keen
bought purchased
weird strange odd peculiar
quiet silent calm
loud noisy
clean tidy neat
dirty messy filthy
broken busted faulty
fixed repaired resolved
working functioning operational
running executing
job run
crash fail
run execute
launch release ship
publish release post
document doc write-up writeup
guide tutorial walkthrough
rule policy guideline
option setting choice
default standard
server host machine box
database db datastore
folder directory dir
file document
link url
message note
email e-mail mail
reply respond answer
answer response reply
question query
picture photo
look seem appear
seems appears looks
appear seem
fast rapidly
buy get
setup set-up configuration
config configuration settings
log logs logging
test tests check
deploy deployment rollout release
roll rollout
rollback revert
review audit
approve sign-off signoff
owner maintainer
owns maintains
handle manage
manage run oversee
store save keep
save store
large big
tiny minuscule
over above
under below beneath
around approximately about roughly
near close nearby
far distant
quick brief short
short brief
long lengthy
whole full
part portion piece section
area region zone
spot place location
city town
road street
shop store
stroll walk
dinner supper
couch sofa
rubbish trash garbage
holiday vacation
film movie
flat apartment
lift elevator
queue line
mobile cell phone cellphone
faucet tap
leak leaking drip dripping
""".strip().splitlines())


def _by_word(groups: tuple[frozenset[str], ...]) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for group in groups:
        for word in group:
            out[word] = out.get(word, frozenset()) | group
    return out


#: Each word of a group → every word it stands for (the union of its groups).
SYNONYMS: dict[str, frozenset[str]] = _by_word(SYNONYM_GROUPS)

#: Common words: a capitalised one at the start of a sentence (or in a title) is this word, not a name. Names a
#: person is likely to write that are also words ("Bill", "Mark", "Will") stay words here when they open a
#: sentence; swapped for another word they still count as a changed detail (``details.compare``).
COMMON = frozenset(NEUTRAL | set(SYNONYMS) | set(ABBREVIATIONS) | set(NUMBER_WORDS) | set(ORDINALS) | set("""
all any some most many few several both either each every other another same different new old next last
more less fewer much little enough own
yes no not never always ever sometimes often usually
can could may might must should shall need needs needed ought
after before until since from to into onto in on off out up down over under above below with without between
behind beyond along against near inside outside upon
let lets let's make makes made take takes took taken give gives gave given put puts keep keeps kept
go goes went gone going come comes came coming get gets got gotten getting set sets run runs ran running
see sees saw seen look looks looked find finds found tell tells told ask asks asked use uses used using
try tries tried call calls called move moves moved turn turns turned start starts started stop stops stopped
open opens opened close closes closed read reads write writes wrote written send sends sent pay pays paid
bring brings brought buy buys bought sell sells sold meet meets met leave leaves left stay stays stayed
pick picks picked drop drops dropped check checks checked add adds added remove removes removed
deploy deploys deployed deploying ship ships shipped build builds built test tests tested fix fixes fixed
back backs backed book books booked cancel cancels cancelled canceled plan plans planned schedule scheduled
remind reminds reminded remember remembers remembered forget forgets forgot forgotten
think thought know knows knew known feel feels felt want wants wanted like likes liked love loves loved
hope hopes hoped wish wishes wished guess guessed mean means meant
said says say told
important decision decided decide update updated updates todo action summary status question answer idea
heads warning caution tip fact facts rule rules policy policies goal goals task tasks done next
today tomorrow yesterday tonight morning afternoon evening night week weekend month year
everyone everybody everything someone somebody something anyone anybody anything nothing noone nobody
people person man woman guy guys folks team teams family friends kids children parents
good great bad nice fine happy sad glad sorry excited busy free ready late early sure right wrong true false
first second third last final main only just even still already yet again also too
please thanks thank hello hi hey bye oh well so okay ok alright yeah yep nope
our your their his her its my
server servers database databases backup backups service services deploys deployments release releases build
builds tests pipeline pipelines job jobs config settings staging production prod dev development cluster
clusters node nodes cache caches caching queue queues worker workers api apis app apps code repo branch branches
merge merges commit commits issue issues bug bugs error errors logs log alert alerts metrics dashboard docs
password passwords token tokens key keys secret secrets user users account accounts admin admins customer
customers client clients billing payments invoice invoices order orders meeting meetings call calls standup
retro review reviews sprint sprints launch launches demo demos office offices room rooms floor
house home car kitchen garage garden school work job doctor dentist appointment appointments dinner lunch
breakfast party birthday trip flight flights hotel train bus ticket tickets shop store groceries rent bill
bills bank money cash card phone email mail letter package parcel delivery
""".split()))
